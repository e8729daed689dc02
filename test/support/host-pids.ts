import { readFile, readdir, readlink } from 'node:fs/promises';

/**
 * The host pid of a process that a workspace's prompt knows as `innerPid`. A confined workspace
 * has its own PID namespace, so `echo $$` there is not a host pid: the host pid is the one whose
 * innermost namespace pid (the last `NSpid` field) is `innerPid` and whose working directory is the
 * workspace's. Unconfined, the two pids are the same. Undefined once the process is gone.
 */
export async function hostPidOf(innerPid: number, cwd: string): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const nsPids = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
    if (nsPids?.at(-1) !== String(innerPid)) continue;
    if ((await readlink(`/proc/${entry}/cwd`).catch(() => '')) === cwd) return Number(entry);
  }
  return undefined;
}
