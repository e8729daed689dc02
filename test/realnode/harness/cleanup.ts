// Undoing the node's traces on the host: mounts (deepest first), the kubelet's cgroups, and the
// files containerd, libcni and the kubelet create outside the workdir.
import { readFile, readdir, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { run } from '../../cluster/harness/tools.js';
import { CNI_NETWORK } from './layout.js';
import type { Baseline } from './layout.js';

const unescapeMountPath = (path: string): string =>
  path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/** Mount points at or under any of `roots`, deepest first. */
export async function mountsUnder(roots: string[]): Promise<string[]> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const points = mountinfo
    .split('\n')
    .map((line) => unescapeMountPath(line.split(' ')[4] ?? ''))
    .filter((point) => roots.some((root) => point === root || point.startsWith(`${root}/`)));
  return [...new Set(points)].sort(
    (a, b) => b.split('/').length - a.split('/').length || b.length - a.length,
  );
}

/** Unmounts everything under `roots`, deepest first, until nothing is left (stacked mounts). */
export async function unmountAll(roots: string[]): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const points = await mountsUnder(roots);
    if (points.length === 0) return;
    for (const point of points) {
      await run('umount', [point]).catch(() => run('umount', ['-l', point]).catch(() => undefined));
    }
  }
}

/**
 * Removes a directory tree that must not cross into other filesystems: a kubelet root still holding a
 * bind mount of a host path would otherwise take the host's files with it.
 */
export async function removeTree(path: string): Promise<void> {
  await run('rm', ['-rf', '--one-file-system', path]).catch(() => undefined);
}

/** Removes an empty cgroup directory tree, children first (cgroupfs allows only rmdir). */
async function removeCgroupTree(dir: string): Promise<void> {
  const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const child of children) if (child.isDirectory()) await removeCgroupTree(join(dir, child.name));
  await rmdir(dir).catch(() => undefined);
}

/** A unix socket nobody listens on any more (a shim killed with SIGKILL leaves its socket). */
async function isStaleSocket(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  if (info?.isSocket() !== true) return false;
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => {
      resolve(true);
    });
  });
}

/** Directories of sockets: a new entry goes only once nobody listens on it. */
const SOCKET_DIRS = ['/run/containerd/s', '/var/lib/kubelet/device-plugins'];

/** What our node may have added to one tracked host path, and whether it may go. */
async function cleanHostPath(path: string, before: string[] | null): Promise<void> {
  if (path === '/var/lib/cni') await removeCniCache(path, before === null);
  const now = await readdir(path).catch(() => null);
  if (now === null) return;
  const added = now.filter((entry) => before?.includes(entry) !== true);
  if (path.startsWith('/sys/fs/cgroup/')) {
    if (before === null) await removeCgroupTree(path);
    return;
  }
  for (const entry of added) {
    const full = join(path, entry);
    if (SOCKET_DIRS.includes(path)) {
      if (await isStaleSocket(full)) await unlink(full).catch(() => undefined);
    } else if (path === '/var/run/netns') {
      // containerd 1.6 pins pod network namespaces here (cni-<uuid>), whatever its configuration.
      if (entry.startsWith('cni-')) {
        await run('umount', [full]).catch(() => undefined);
        await rm(full, { force: true });
      }
    } else if (before === null) {
      await removeTree(full);
    }
  }
  if (before === null) await rmdir(path).catch(() => undefined);
}

/**
 * libcni's result cache: our network's entries and those of the CRI's loopback network (only our
 * containerd uses CNI here), and the directories that leaves empty.
 */
async function removeCniCache(dir: string, removeIfEmpty = true): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await removeCniCache(full);
    else if (entry.name.startsWith(`${CNI_NETWORK}-`) || entry.name.startsWith('cni-loopback-')) {
      await rm(full, { force: true });
    }
  }
  if (removeIfEmpty) await rmdir(dir).catch(() => undefined);
}

/** Restores every tracked host path to what the baseline lists (removing only what is ours). */
export async function cleanHostPaths(baseline: Baseline): Promise<void> {
  // Deeper paths first: /run/containerd/s before /run/containerd.
  const paths = Object.keys(baseline.hostPaths).sort((a, b) => b.length - a.length);
  for (const path of paths) await cleanHostPath(path, baseline.hostPaths[path] ?? null);
}
