import { readFile, readdir, readlink } from 'node:fs/promises';

/** `st` of a listening TCP socket in /proc/net/tcp{,6}. */
const TCP_LISTEN = '0A';
const SOCKET_LINK = /^socket:\[(\d+)\]$/;

/** inode → local port of every listening socket in one /proc/net/tcp file (missing file: none). */
async function listeningSockets(file: string): Promise<Map<string, number>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const sockets = new Map<string, number>();
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
    const fields = line.trim().split(/\s+/);
    const local = fields[1];
    const inode = fields[9];
    if (fields[3] !== TCP_LISTEN || local === undefined || inode === undefined) continue;
    const port = Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
    if (Number.isInteger(port) && port > 0) sockets.set(inode, port);
  }
  return sockets;
}

/** Socket inodes held open by one process; a process that ended or is not ours holds none we can read. */
async function socketInodes(pid: string): Promise<string[]> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return links.flatMap((link) => SOCKET_LINK.exec(link)?.[1] ?? []);
}

/**
 * The TCP ports processes of this workspace listen on, sorted, without the runner's own (`selfPid`).
 * /proc/net lists every socket of the network namespace, which the process runtime shares with the
 * host; only sockets held by a process this runner can see count, and its /proc shows only its
 * sandbox (a PID namespace in bubblewrap, a pod, a VM). So port 8080 of the API server or of
 * another workspace is never in the list.
 */
export async function listeningPorts(selfPid: number = process.pid): Promise<number[]> {
  const [v4, v6] = await Promise.all([listeningSockets('/proc/net/tcp'), listeningSockets('/proc/net/tcp6')]);
  const byInode = new Map([...v4, ...v6]);
  if (byInode.size === 0) return [];
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && name !== String(selfPid));
  const held = await Promise.all(pids.map(socketInodes));
  const ports = new Set<number>();
  for (const inode of held.flat()) {
    const port = byInode.get(inode);
    if (port !== undefined) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}
