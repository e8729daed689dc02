// The machine under the real node: what it must have, and what it looked like before we touched it.
import { execFile as execFileCallback } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { z } from 'zod';
import { HarnessError, run } from '../../cluster/harness/tools.js';
import type { Baseline } from './layout.js';
import { snapshotChains } from './iptables.js';

const execFile = promisify(execFileCallback);

/** Commands the node needs, with the Debian package that provides each (all in scripts/test-packages.txt). */
export const REQUIRED_COMMANDS: Record<string, string> = {
  containerd: 'containerd',
  ctr: 'containerd',
  runc: 'runc',
  buildah: 'buildah',
  ip: 'iproute2',
  iptables: 'iptables',
  'iptables-save': 'iptables',
  'iptables-restore': 'iptables',
  ip6tables: 'iptables',
  nft: 'nftables',
  ipset: 'ipset',
  conntrack: 'conntrack',
  socat: 'socat',
  flock: 'util-linux',
  mount: 'mount',
};
/** Static busybox: the test image's only binary (a dynamic one would need a libc in the image). */
export const BUSYBOX = '/bin/busybox';
const CNI_PLUGINS = ['bridge', 'host-local', 'portmap', 'loopback'];
export const CNI_BIN_DIR = '/usr/lib/cni';

const exists = async (command: string): Promise<boolean> =>
  execFile('sh', ['-c', `command -v "$1"`, 'sh', command]).then(
    () => true,
    () => false,
  );

/** Fails with what to install (never skips): root, the packages, the CNI plugins, static busybox. */
export async function requireHost(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new HarnessError('the real-node tests run a kubelet, containerd and iptables: run them as root');
  }
  const missing = new Set<string>();
  for (const [command, pkg] of Object.entries(REQUIRED_COMMANDS)) {
    if (!(await exists(command))) missing.add(pkg);
  }
  for (const plugin of CNI_PLUGINS) {
    const found = await readFile(`${CNI_BIN_DIR}/${plugin}`).then(
      () => true,
      () => false,
    );
    if (!found) missing.add('containernetworking-plugins');
  }
  const busybox = await execFile('sh', [
    '-c',
    'test -x "$1" && { ldd "$1" 2>&1 || true; }',
    'sh',
    BUSYBOX,
  ]).then(
    ({ stdout }) => (/not a dynamic executable/.test(stdout) ? 'static' : 'dynamic'),
    () => 'absent',
  );
  if (busybox !== 'static') missing.add('busybox-static');
  if (missing.size > 0) {
    throw new HarnessError(
      `the real-node tests need these Debian packages: apt-get install ${[...missing].sort().join(' ')}`,
    );
  }
}

/** Kernel settings the node changes (the CNI bridge, kube-proxy and the kubelet set some of them). */
const SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv6/conf/all/forwarding',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
  'net/ipv4/conf/all/route_localnet',
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
  'net/netfilter/nf_conntrack_max',
  'net/netfilter/nf_conntrack_tcp_timeout_established',
  'net/netfilter/nf_conntrack_tcp_timeout_close_wait',
];

/**
 * Paths outside the workdir that containerd 1.6, libcni or the kubelet create regardless of their
 * configuration (netns mounts, shim sockets, CNI cache, log symlinks, device-plugin socket, QoS
 * cgroups). buildah's shared blob-info cache (/var/lib/containers/cache) is left as it is.
 */
export async function hostPathsToTrack(): Promise<string[]> {
  const hierarchies = await readdir('/sys/fs/cgroup').catch(() => []);
  return [
    '/var/run/netns',
    '/run/containerd/s',
    '/run/containerd',
    '/var/lib/cni',
    '/var/log/containers',
    '/var/log/pods',
    // The device-plugin socket's directory is a constant of the kubelet, not under --root-dir.
    '/var/lib/kubelet/device-plugins',
    '/var/lib/kubelet',
    // KubeVirt's virt-handler (the kubevirt project): its host directories.
    '/run/kubevirt',
    '/run/kubevirt-private',
    '/run/kubevirt-libvirt-runtimes',
    '/var/lib/kubevirt-node-labeller',
    ...hierarchies.map((hierarchy) => `/sys/fs/cgroup/${hierarchy}/kubepods`),
  ];
}

const listOrNull = async (path: string): Promise<string[] | null> =>
  readdir(path).then(
    (entries) => entries.sort(),
    () => null,
  );

const RouteSchema = z.array(z.object({ dev: z.string() }));

async function uplinkInterface(): Promise<string> {
  const routes = RouteSchema.parse(JSON.parse(await run('ip', ['-j', 'route', 'show', 'default'])));
  const uplink = routes[0]?.dev;
  if (uplink === undefined)
    throw new HarnessError('the machine has no default route: no uplink to fence off');
  return uplink;
}

const NftTablesSchema = z.object({
  nftables: z.array(z.object({ table: z.object({ family: z.string(), name: z.string() }).optional() })),
});

export async function nftTables(): Promise<string[]> {
  const parsed = NftTablesSchema.parse(JSON.parse(await run('nft', ['-j', 'list', 'tables'])));
  return parsed.nftables.flatMap((entry) =>
    entry.table === undefined ? [] : [`${entry.table.family} ${entry.table.name}`],
  );
}

export async function ipsetNames(): Promise<string[]> {
  return (await run('ipset', ['list', '-n'])).split('\n').filter((name) => name !== '');
}

export async function takeBaseline(): Promise<Baseline> {
  const sysctls: Record<string, string> = {};
  for (const key of SYSCTLS) {
    const value = await readFile(`/proc/sys/${key}`, 'utf8').catch(() => undefined);
    if (value !== undefined) sysctls[key] = value.trim();
  }
  const hostPaths: Record<string, string[] | null> = {};
  for (const path of await hostPathsToTrack()) hostPaths[path] = await listOrNull(path);
  return {
    sysctls,
    iptablesChains: { ipv4: await snapshotChains('ipv4'), ipv6: await snapshotChains('ipv6') },
    nftTables: await nftTables(),
    ipsets: await ipsetNames(),
    hostPaths,
    uplink: await uplinkInterface(),
  };
}

export async function setSysctl(key: string, value: string): Promise<void> {
  await writeFile(`/proc/sys/${key}`, value);
}

export async function restoreSysctls(baseline: Baseline): Promise<void> {
  for (const [key, value] of Object.entries(baseline.sysctls)) {
    const now = await readFile(`/proc/sys/${key}`, 'utf8').catch(() => undefined);
    // Some keys take several whitespace-separated numbers; compare normalized.
    if (now !== undefined && now.trim().split(/\s+/).join(' ') !== value.split(/\s+/).join(' ')) {
      await setSysctl(key, value).catch(() => undefined);
    }
  }
}
