import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 25;
const MAX_POLL_MS = 200;
/** After SIGKILL a process can only linger in uninterruptible I/O; past this we stop waiting for it. */
const AFTER_KILL_LIMIT_MS = 60_000;

/** Structural, not instanceof: errors from another realm (a vm context, a worker) must count too. */
function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

/**
 * Sends `signal` to every process of group `pgid`. A group already gone is not an error, nor is a
 * member we may not signal (EPERM: it changed its user): waiting for the group then ends at the
 * after-SIGKILL limit.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    const code = errorCode(err);
    if (code !== 'ESRCH' && code !== 'EPERM')
      throw new Error(`sending ${signal} to process group ${pgid}`, { cause: err });
  }
}

/**
 * Whether any process of group `pgid` still runs. kill(0) also counts zombies, and a zombie whose
 * parent died is only reaped by PID 1, which in a container may never do it: so when kill(0) says
 * yes, /proc (where there is one) decides whether a member is more than a zombie.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return errorCode(err) !== 'ESRCH';
  }
  return (await livingMembersFromProc(pgid)) ?? true;
}

/** true/false from /proc, or undefined where /proc cannot tell (not Linux). */
async function livingMembersFromProc(pgid: number): Promise<boolean | undefined> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command (which may hold spaces): state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[2] === String(pgid) && fields[0] !== 'Z') return true;
  }
  return false;
}

/**
 * Ends process group `pgid`: SIGTERM, SIGKILL after `graceMs` if anything is left, and resolves
 * once no member runs (or, for a process that even SIGKILL cannot end, after a minute more).
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await groupAlive(pgid))) return;
  signalGroup(pgid, 'SIGTERM');
  const killAt = Date.now() + graceMs;
  let killed = false;
  let pollMs = POLL_MS;
  while (await groupAlive(pgid)) {
    if (!killed && Date.now() >= killAt) {
      signalGroup(pgid, 'SIGKILL');
      killed = true;
    }
    if (killed && Date.now() >= killAt + AFTER_KILL_LIMIT_MS) return;
    // Poll fast at first (most processes end on SIGTERM at once), but wake up for SIGKILL on time.
    await delay(killed ? pollMs : Math.max(1, Math.min(pollMs, killAt - Date.now())));
    pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
  }
}
