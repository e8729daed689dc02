// containerd for the real node: its own root, state, socket and config under the workdir.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HarnessError, run } from '../../cluster/harness/tools.js';
import { CNI_BIN_DIR } from './host.js';
import { PAUSE_IMAGE } from './layout.js';
import type { NodePaths } from './layout.js';
import { sleep, startDaemon } from './processes.js';

/** containerd's image namespace for Kubernetes (the CRI plugin's). */
const K8S_NAMESPACE = 'k8s.io';

function config(paths: NodePaths): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${paths.containerdRoot}"
state = "${paths.containerdState}"

[grpc]
  address = "${paths.containerdSocket}"
[ttrpc]
  address = "${paths.containerdSocket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

# The default would be /opt/containerd.
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(paths.containerdRoot, 'opt')}"

[${cri}]
  sandbox_image = "${PAUSE_IMAGE}"
  # Required here: without CAP_SYS_RESOURCE every pod fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  # exec/attach/port-forward streams, proxied by the kubelet: loopback only.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  [${cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [${cri}.containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
        # runc's state; the shim's default is /run/containerd/runc.
        Root = "${join(paths.containerdState, 'runc')}"
  [${cri}.cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${paths.cniConfDir}"
`;
}

/** ctr against the node's containerd. */
export async function ctr(socket: string, args: string[], timeoutMs = 180_000): Promise<string> {
  return run('ctr', ['--address', socket, '--namespace', K8S_NAMESPACE, ...args], { timeoutMs });
}

/**
 * containerd as PID 1 of a PID namespace of its own (StartRealNodeOptions.containerdPidNamespace):
 * unshare's child mounts a /proc of the new namespace (its copy of /proc made private first, so the
 * host's /proc is untouched) and becomes containerd. Mounts stay shared with the host. Stopping
 * unshare stops containerd (--kill-child), and with it every process of the namespace.
 */
function inOwnPidNamespace(command: string[]): [string, string[]] {
  const script = 'mount --make-private /proc && mount -t proc proc /proc && exec "$@"';
  return [
    'unshare',
    [
      '--pid',
      '--fork',
      '--mount',
      '--propagation',
      'unchanged',
      '--kill-child=SIGTERM',
      'sh',
      '-c',
      script,
      'sh',
      ...command,
    ],
  ];
}

export async function startContainerd(paths: NodePaths, ownPidNamespace = false): Promise<number> {
  await mkdir(dirname(paths.containerdConfig), { recursive: true });
  await writeFile(paths.containerdConfig, config(paths));
  const command = ['containerd', '--config', paths.containerdConfig];
  const [program, args] = ownPidNamespace ? inOwnPidNamespace(command) : ['containerd', command.slice(1)];
  const pid = await startDaemon('containerd', program, args, paths.logs);
  const deadline = Date.now() + 60_000;
  while (
    !(await ctr(paths.containerdSocket, ['version'], 5_000).then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) {
      throw new HarnessError(`containerd did not answer on its socket; see ${paths.logs}/containerd.log`);
    }
    await sleep(200);
  }
  return pid;
}

/** Imports a docker-archive (or OCI) tar into the node's image store, where the kubelet finds it. */
export async function importImage(socket: string, archivePath: string): Promise<void> {
  await ctr(socket, ['images', 'import', archivePath], 600_000);
}

/** Container ids containerd knows in the Kubernetes namespace. */
export async function containerIds(socket: string): Promise<string[]> {
  return (await ctr(socket, ['containers', 'ls', '-q'])).split('\n').filter((id) => id !== '');
}
