// Undoing a real node completely, from its state file alone (also after its owner was killed).
import { destroyCluster } from '../../cluster/harness/cluster.js';
import { run } from '../../cluster/harness/tools.js';
import { kubeRouterFlags } from './addons.js';
import { cleanHostPaths, removeTree, unmountAll } from './cleanup.js';
import { tearDownControlPlaneHost } from './control-plane-host.js';
import { ipsetNames, nftTables, restoreSysctls } from './host.js';
import { removeAddedRules } from './iptables.js';
import { nodePaths } from './layout.js';
import type { RealNodeState } from './layout.js';
import { releaseNodeLock } from './lock.js';
import { tearDownNetwork } from './network.js';
import { killAll, pidsInCgroupTree, pidsWhere, stopProcess } from './processes.js';

/** Stops the daemons (containerd last), the pods' processes and containerd's shims. */
async function stopProcesses(state: RealNodeState): Promise<void> {
  const paths = nodePaths(state.workdir, state.kubeletRoot);
  const daemons = [...state.pids].reverse();
  for (const { name, pid } of daemons) if (name !== 'containerd') await stopProcess(pid);
  // Anything else started with a path of the workdir (a daemon spawned just before a kill -9).
  const mentions = (path: string) => (args: string[]) => args.some((arg) => arg.includes(path));
  for (const pid of await pidsWhere(mentions(paths.kubeletRoot))) await stopProcess(pid);
  // Containers keep running without the kubelet: kill them, then their shims, then containerd.
  await killAll(() => pidsInCgroupTree('/sys/fs/cgroup/pids/kubepods'));
  await killAll(() => pidsWhere(mentions(paths.containerdSocket)));
  for (const { name, pid } of daemons) if (name === 'containerd') await stopProcess(pid);
  // And anything else started with a path of the workdir (spawned just before a kill -9).
  for (const pid of await pidsWhere(mentions(state.workdir))) await stopProcess(pid);
}

/** kube-proxy's and kube-router's own cleanup modes, then whatever KUBE- chains remain. */
async function removeFirewallState(state: RealNodeState): Promise<void> {
  const quiet = { timeoutMs: 60_000 };
  if (state.kubeProxy !== undefined) await run(state.kubeProxy, ['--cleanup'], quiet).catch(() => undefined);
  if (state.kubeRouter !== undefined && state.cluster !== undefined) {
    await run(state.kubeRouter, [...kubeRouterFlags(state.cluster), '--cleanup-config'], quiet).catch(
      () => undefined,
    );
  }
  await removeAddedRules('ipv4', state.baseline.iptablesChains.ipv4);
  await removeAddedRules('ipv6', state.baseline.iptablesChains.ipv6);
  for (const set of await ipsetNames()) {
    if (!state.baseline.ipsets.includes(set) && /^(KUBE-|kube-router)/.test(set)) {
      await run('ipset', ['destroy', set]).catch(() => undefined);
    }
  }
  await removeEmptyNftTables(state.baseline.nftTables);
}

/** nft tables that iptables-nft created for our rules and that are now empty. */
async function removeEmptyNftTables(before: string[]): Promise<void> {
  for (const table of await nftTables()) {
    if (before.includes(table)) continue;
    const [family = '', name = ''] = table.split(' ');
    const listing = await run('nft', ['-j', 'list', 'table', family, name]).catch(() => '');
    if (listing !== '' && !listing.includes('"rule"')) {
      await run('nft', ['delete', 'table', family, name]).catch(() => undefined);
    }
  }
}

/** Stops everything the node started and leaves the machine as its baseline recorded it. */
export async function destroyRealNode(
  state: RealNodeState,
  options: { releaseLock?: boolean } = {},
): Promise<void> {
  await stopProcesses(state);
  await unmountAll([state.workdir, ...(state.kubeletRoot === undefined ? [] : [state.kubeletRoot])]);
  if (state.rootMadeShared === true) await run('mount', ['--make-rprivate', '/']).catch(() => undefined);
  await cleanHostPaths(state.baseline);
  await tearDownNetwork(state.baseline.uplink);
  await tearDownControlPlaneHost(nodePaths(state.workdir));
  await removeFirewallState(state);
  await restoreSysctls(state.baseline);
  if (state.cluster !== undefined) await destroyCluster(state.cluster);
  await removeTree(state.workdir);
  if (options.releaseLock !== false) await releaseNodeLock();
}
