import { readFile } from 'node:fs/promises';
import { errnoOf } from '../../../platform/errno.js';

/** Whether a process with this pid exists (EPERM: it does, but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}

/**
 * Signals the runner's process group (runners are started as group leaders), so that whatever it
 * started (agent CLIs, shells) goes with it; falls back to the pid alone. A gone process is fine.
 */
export function signalRunner(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
    return;
  } catch {
    // not a group leader (or the group is gone): try the process itself
  }
  try {
    process.kill(pid, signal);
  } catch (err) {
    if (errnoOf(err) !== 'ESRCH') throw new Error(`cannot send ${signal} to runner ${pid}`, { cause: err });
  }
}

/**
 * Whether a live pid is still the runner of this workspace, not an unrelated process that reused
 * the pid: its environment (fixed at exec) names the workspace's working directory. `unknown`
 * where /proc does not exist (macOS); callers then trust the record.
 */
export async function runnerIdentity(
  pid: number,
  workdir: string,
  variable = 'AGENTRY_RUNNER_WORKDIR',
): Promise<'ours' | 'other' | 'unknown'> {
  let environ: Buffer;
  try {
    environ = await readFile(`/proc/${pid}/environ`);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return pidAlive(pid) ? 'unknown' : 'other';
    return 'other'; // EACCES: another user's process, so not a runner we started
  }
  const expected = `${variable}=${workdir}`;
  return environ.toString('utf8').split('\0').includes(expected) ? 'ours' : 'other';
}
