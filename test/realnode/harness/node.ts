// A real node beside KWOK's fake ones: containerd, kubelet, kube-proxy, kube-router, CoreDNS and
// local-path-provisioner on this machine, joined to a harness cluster (see NOTES.md next to this file).
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterStateOf, kubectl, startCluster } from '../../cluster/harness/cluster.js';
import type { ClusterState } from '../../cluster/harness/cluster.js';
import { HarnessError, buildRealNodeTools, run } from '../../cluster/harness/tools.js';
import type { RealNodeTools } from '../../cluster/harness/tools.js';
import { localPathObjects, startCoreDns, startKubeRouter, startLocalPathProvisioner } from './addons.js';
import { importImage, startContainerd } from './containerd.js';
import {
  setUpControlPlaneHost,
  startControlPlaneListener,
  startLoopbackRelay,
} from './control-plane-host.js';
import { requireHost, takeBaseline } from './host.js';
import { buildNodeImages } from './images.js';
import { startKubeProxy, startKubelet } from './kubelet.js';
import { writeKwokctlConfig } from './kwokctl-config.js';
import {
  CONTROL_PLANE_IP,
  NODE_IP,
  NODE_NAME,
  POD_CIDR,
  RealNodeStateSchema,
  WORKDIR_PREFIX,
  nodePaths,
} from './layout.js';
import type { NodePaths, RealNodeState } from './layout.js';
import { acquireNodeLock, holdsNodeLock, releaseNodeLock } from './lock.js';
import { setUpNetwork } from './network.js';
import { isAlive } from './processes.js';
import { destroyRealNode } from './teardown.js';

export interface RealNode extends RealNodeState {
  cluster: ClusterState;
  paths: NodePaths;
  nodeName: string;
  nodeIp: string;
  /** The control-plane host (a network namespace): the kube-apiserver's endpoint and moto's. */
  controlPlaneIp: string;
  podCidr: string;
  /** moto (S3/SQS) as the host reaches it: loopback. */
  motoHostUrl: string;
  /** moto as pods reach it: the control-plane host, forwarded to moto on loopback. */
  motoPodUrl: string;
  /** Milliseconds from the kubelet's start to the node's Ready condition. */
  nodeReadyMs: number;
  /** Stops everything and restores the machine; safe to call twice. */
  stop(): Promise<void>;
}

export interface StartRealNodeOptions {
  ownerPid?: number;
  /**
   * Image archives (docker-archive or OCI tars) to import into the node's containerd before the
   * kubelet starts. The integrator's images/build.sh output goes here.
   */
  imageArchives?: string[];
  /**
   * The kubelet's root directory, when it must be a fixed host path: KubeVirt's virt-handler finds
   * pods' volumes under /var/lib/kubelet whatever the kubelet's flags say. It must not exist yet
   * (another kubelet's); teardown removes it. Default: under the workdir.
   */
  kubeletRoot?: string;
  /**
   * The root mount made recursively shared for the node's life, as systemd makes it on usual hosts:
   * pods that mount host paths with Bidirectional propagation (KubeVirt's virt-handler: the kubelet
   * root, /var/run/kubevirt) need it, and containerd checks the mount point of the path as written,
   * so a shared bind mount at /run/kubevirt would not do for /var/run/kubevirt. Undone at teardown.
   */
  sharedRootMount?: boolean;
  /**
   * containerd, and so every hostPID pod, in a PID namespace of its own with containerd as PID 1.
   * This machine's PID 1 belongs to an ancestor user namespace: nobody, root included, may open its
   * /proc/1/ns/*, and KubeVirt's virt-handler enters /proc/1/ns/mnt of its PID namespace (virt-chroot).
   */
  containerdPidNamespace?: boolean;
  /** StartClusterOptions.fakeKubevirt: false when real KubeVirt is to be installed. */
  fakeKubevirt?: boolean;
}

async function saveState(state: RealNodeState): Promise<void> {
  await writeFile(nodePaths(state.workdir).state, JSON.stringify(state));
}

/** The root mount recursively shared, recorded first so that teardown makes it private again. */
async function shareRootMount(state: RealNodeState): Promise<void> {
  state.rootMadeShared = true;
  await saveState(state);
  await run('mount', ['--make-rshared', '/']);
}

/** A fixed kubelet root must be ours alone: refuse one that exists (another kubelet's, or a leftover). */
async function requireFreeKubeletRoot(root: string | undefined): Promise<void> {
  if (root === undefined) return;
  const entries = await readdir(root).catch(() => null);
  if (entries !== null && entries.length > 0) {
    throw new HarnessError(`${root} exists and is not empty: another kubelet's? Remove it first`);
  }
}

/** Records a daemon's pid at once, so that a kill -9 right after still finds it. */
async function track(state: RealNodeState, name: string, start: Promise<number>): Promise<void> {
  state.pids.push({ name, pid: await start });
  await saveState(state);
}

const portOf = (url: string): number => Number(new URL(url).port);

async function apiserverUrl(cluster: ClusterState): Promise<string> {
  return (
    await kubectl(cluster, ['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])
  ).trim();
}

async function waitForNode(cluster: ClusterState): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (
    !(await kubectl(cluster, ['get', 'node', NODE_NAME]).then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new HarnessError(`node ${NODE_NAME} never registered`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await kubectl(cluster, ['wait', '--for=condition=Ready', '--timeout=120s', `node/${NODE_NAME}`]);
}

async function startNodeComponents(
  state: RealNodeState,
  cluster: ClusterState,
  tools: RealNodeTools,
): Promise<number> {
  const paths = nodePaths(state.workdir, state.kubeletRoot);
  const forwarded: [string, number][] = [['apiserver', portOf(await apiserverUrl(cluster))]];
  if (cluster.motoUrl !== undefined) forwarded.push(['moto', portOf(cluster.motoUrl)]);
  for (const [name, port] of forwarded) {
    await track(state, `forward-${name}-loopback`, startLoopbackRelay(paths, name, port));
    await track(state, `forward-${name}`, startControlPlaneListener(paths, name, port));
  }
  const kubeletStarted = Date.now();
  await track(state, 'kubelet', startKubelet(paths, cluster, tools.KUBELET));
  await waitForNode(cluster);
  const nodeReadyMs = Date.now() - kubeletStarted;
  // No controller allocates node CIDRs here; kube-router reads the node's.
  await kubectl(cluster, [
    'patch',
    'node',
    NODE_NAME,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] } }),
  ]);
  await track(state, 'kube-proxy', startKubeProxy(paths, cluster, tools.KUBE_PROXY));
  await track(state, 'kube-router', startKubeRouter(paths, cluster, tools.KUBE_ROUTER));
  await track(state, 'coredns', startCoreDns(paths, cluster, tools.COREDNS));
  await kubectl(cluster, ['apply', '-f', '-'], localPathObjects());
  await track(
    state,
    'local-path-provisioner',
    startLocalPathProvisioner(paths, cluster, tools.LOCAL_PATH_PROVISIONER),
  );
  return nodeReadyMs;
}

/** Starts the cluster and the real node; on failure tears everything down and rethrows. */
export async function startRealNode(options: StartRealNodeOptions = {}): Promise<RealNode> {
  await requireHost();
  await acquireNodeLock();
  await reapStaleRealNodes();
  await requireFreeKubeletRoot(options.kubeletRoot);
  const ownerPid = options.ownerPid ?? process.pid;
  const workdir = await mkdtemp(join(tmpdir(), WORKDIR_PREFIX));
  const { kubeletRoot } = options;
  const paths = nodePaths(workdir, kubeletRoot);
  const state: RealNodeState = {
    ownerPid,
    workdir,
    baseline: await takeBaseline(),
    pids: [],
    ...(kubeletRoot === undefined ? {} : { kubeletRoot }),
  };
  await saveState(state);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await destroyRealNode(state);
  };
  try {
    if (options.sharedRootMount === true) await shareRootMount(state);
    const tools = await buildRealNodeTools(join(workdir, 'tools.env'));
    Object.assign(state, { kubeProxy: tools.KUBE_PROXY, kubeRouter: tools.KUBE_ROUTER });
    await setUpNetwork(paths, state.baseline.uplink);
    await setUpControlPlaneHost(paths);
    const archives = await buildNodeImages(paths, tools.PAUSE);
    await track(state, 'containerd', startContainerd(paths, options.containerdPidNamespace === true));
    for (const archive of [...archives, ...(options.imageArchives ?? [])]) {
      await importImage(paths.containerdSocket, archive);
    }
    const cluster = await startCluster({
      ownerPid,
      tools,
      kwokctlConfig: (clusterState) => writeKwokctlConfig(paths.kwokctlConfig, clusterState),
      ...(options.fakeKubevirt === undefined ? {} : { fakeKubevirt: options.fakeKubevirt }),
    });
    state.cluster = clusterStateOf(cluster);
    await saveState(state);
    const nodeReadyMs = await startNodeComponents(state, state.cluster, tools);
    const motoPort = cluster.motoUrl === undefined ? 0 : portOf(cluster.motoUrl);
    return {
      ...state,
      cluster: state.cluster,
      paths,
      nodeName: NODE_NAME,
      nodeIp: NODE_IP,
      controlPlaneIp: CONTROL_PLANE_IP,
      podCidr: POD_CIDR,
      motoHostUrl: cluster.motoUrl ?? '',
      motoPodUrl: `http://${CONTROL_PLANE_IP}:${motoPort}`,
      nodeReadyMs,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Finds real nodes whose owner died (kill -9, a crashed CI run) and undoes them. */
export async function reapStaleRealNodes(): Promise<string[]> {
  // Holding the lock, no live run can be setting a node up or tearing one down meanwhile.
  const hadLock = holdsNodeLock();
  await acquireNodeLock();
  const reaped: string[] = [];
  try {
    for (const entry of await readdir(tmpdir())) {
      if (!entry.startsWith(WORKDIR_PREFIX)) continue;
      const workdir = join(tmpdir(), entry);
      const raw = await readFile(nodePaths(workdir).state, 'utf8').catch(() => undefined);
      const parsed = raw === undefined ? undefined : RealNodeStateSchema.safeParse(JSON.parse(raw));
      if (parsed?.success !== true || isAlive(parsed.data.ownerPid)) continue;
      await destroyRealNode(parsed.data, { releaseLock: false });
      reaped.push(workdir);
    }
  } finally {
    if (!hadLock) await releaseNodeLock();
  }
  return reaped;
}
