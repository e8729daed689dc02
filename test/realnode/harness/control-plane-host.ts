// "The control-plane host": a network namespace standing for the machines a real cluster's
// kube-apiserver (and here moto, its S3 and SQS) run on. Pods reach it through the host's FORWARD
// path, where kube-router polices their egress; a listener on the node's own address would not be
// policed at all (NetworkPolicy never governs traffic between a pod and its own node).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../cluster/harness/tools.js';
import { CONTROL_PLANE_IP, CONTROL_PLANE_LINK, CONTROL_PLANE_PEER, NODE_IP, POD_CIDR } from './layout.js';
import type { NodePaths } from './layout.js';
import { linkExists } from './network.js';
import { sleep, startDaemon } from './processes.js';

const inControlPlaneHost = (paths: NodePaths, command: string, args: string[]): string[] => [
  `--net=${paths.controlPlaneNetns}`,
  command,
  ...args,
];

/**
 * Creates the namespace (pinned by a bind mount under the workdir, so unmounting it, or the reaper's
 * unmount of the workdir, destroys it with its veth), the veth pair and a /32 route each way.
 */
export async function setUpControlPlaneHost(paths: NodePaths): Promise<void> {
  const netns = paths.controlPlaneNetns;
  await writeFile(netns, '');
  await run('unshare', [`--net=${netns}`, 'true']);
  await run('ip', [
    'link',
    'add',
    CONTROL_PLANE_LINK,
    'type',
    'veth',
    'peer',
    'name',
    CONTROL_PLANE_PEER,
    'netns',
    netns,
  ]);
  await run('ip', ['link', 'set', CONTROL_PLANE_LINK, 'up']);
  await run('ip', ['route', 'add', `${CONTROL_PLANE_IP}/32`, 'dev', CONTROL_PLANE_LINK, 'src', NODE_IP]);
  const inside = (args: string[]): Promise<string> => run('nsenter', inControlPlaneHost(paths, 'ip', args));
  await inside(['link', 'set', 'lo', 'up']);
  await inside(['addr', 'add', `${CONTROL_PLANE_IP}/32`, 'dev', CONTROL_PLANE_PEER]);
  await inside(['link', 'set', CONTROL_PLANE_PEER, 'up']);
  await inside(['route', 'add', `${NODE_IP}/32`, 'dev', CONTROL_PLANE_PEER, 'src', CONTROL_PLANE_IP]);
  // Only the node and the pods: no default route, so nothing inside can reach past the machine.
  await inside(['route', 'add', POD_CIDR, 'via', NODE_IP, 'dev', CONTROL_PLANE_PEER]);
}

const socketOf = (paths: NodePaths, name: string): string => join(paths.forwardSockets, `${name}.sock`);

/**
 * The loopback half of a forwarder: a unix socket (which every network namespace can open) relayed to
 * `127.0.0.1:port`. No TCP listener on the node address, so pods cannot bypass the control-plane host.
 */
export async function startLoopbackRelay(paths: NodePaths, name: string, port: number): Promise<number> {
  await mkdir(paths.forwardSockets, { recursive: true });
  return startDaemon(
    `forward-${name}-loopback`,
    'socat',
    [`UNIX-LISTEN:${socketOf(paths, name)},fork,unlink-early`, `TCP:127.0.0.1:${port}`],
    paths.logs,
  );
}

/** The pods' half: `CONTROL_PLANE_IP:port` inside the control-plane host, relayed to the unix socket. */
export async function startControlPlaneListener(
  paths: NodePaths,
  name: string,
  port: number,
): Promise<number> {
  // nsenter execs socat: the pid is socat's, and its arguments name the workdir for the reaper.
  return startDaemon(
    `forward-${name}`,
    'nsenter',
    inControlPlaneHost(paths, 'socat', [
      `TCP-LISTEN:${port},bind=${CONTROL_PLANE_IP},reuseaddr,fork`,
      `UNIX-CONNECT:${socketOf(paths, name)}`,
    ]),
    paths.logs,
  );
}

/** Frees the namespace and deletes the veth pair (its route goes with it); idempotent. */
export async function tearDownControlPlaneHost(paths: NodePaths): Promise<void> {
  await run('umount', [paths.controlPlaneNetns]).catch(() => undefined);
  // A freed namespace takes its veth with it, but asynchronously: delete it now, and wait if it is
  // already on its way out.
  for (let attempt = 0; attempt < 100 && (await linkExists(CONTROL_PLANE_LINK)); attempt++) {
    await run('ip', ['link', 'del', CONTROL_PLANE_LINK]).catch(() => undefined);
    await sleep(100);
  }
}
