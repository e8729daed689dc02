// The node's daemons: started detached with a log file each, stopped by pid (never by name).
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessError } from '../../cluster/harness/tools.js';

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A process that exited and waits for its parent to reap it holds nothing (ports, mounts). */
async function isZombie(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return / Z /.test(stat.slice(stat.lastIndexOf(')')));
}

/** Starts a daemon in its own process group, output to `<logs>/<name>.log`; returns its pid. */
export async function startDaemon(
  name: string,
  command: string,
  args: string[],
  logs: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  await mkdir(logs, { recursive: true });
  const log = await open(join(logs, `${name}.log`), 'a');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', log.fd, log.fd], env });
    child.unref();
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        resolve(child.pid ?? 0);
      });
    });
    if (pid === 0) throw new HarnessError(`${name} did not start`);
    return pid;
  } finally {
    await log.close();
  }
}

/** Alive and not a zombie. */
export async function isRunning(pid: number): Promise<boolean> {
  return isAlive(pid) && !(await isZombie(pid));
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process is gone. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  const gone = async (): Promise<boolean> => !isAlive(pid) || (await isZombie(pid));
  if (await gone()) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (!(await gone())) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        return;
      }
      for (let i = 0; i < 50 && !(await gone()); i++) await sleep(100);
      return;
    }
    await sleep(100);
  }
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

/** Pids (other than ours) whose argument vector satisfies `matches`. */
export async function pidsWhere(matches: (args: string[]) => boolean): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline !== '' && matches(cmdline.split('\0'))) pids.push(Number(entry));
  }
  return pids;
}

/** Every pid in a cgroup v1 subtree (e.g. the kubelet's kubepods in the pids hierarchy). */
export async function pidsInCgroupTree(dir: string): Promise<number[]> {
  const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  const pids = procs
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
  const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const child of children) {
    if (child.isDirectory()) pids.push(...(await pidsInCgroupTree(join(dir, child.name))));
  }
  return pids;
}

/** SIGKILLs the pids until none is left alive (container processes, stale shims). */
export async function killAll(pids: () => Promise<number[]>): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const alive: number[] = [];
    for (const pid of await pids()) if (isAlive(pid) && !(await isZombie(pid))) alive.push(pid);
    if (alive.length === 0) return;
    for (const pid of alive) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await sleep(100);
  }
}
