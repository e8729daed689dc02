import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { groupAlive, terminateGroup } from './process-group.js';

/**
 * A note in the prompt's scratch directory naming the executor's process group while it runs. A
 * runner killed with SIGKILL cannot kill its executor, which lives in its own group; the next
 * runner reads the note and ends the group. The boot id and the process's start time make sure
 * the pid still names the same process (after a VM reboot a pid may belong to anything).
 */
const LEASE_FILE = 'executor.json';

const LeaseSchema = z.object({
  pgid: z.number().int().positive(),
  bootId: z.string(),
  startTime: z.string(),
});
type Lease = z.infer<typeof LeaseSchema>;

async function bootId(): Promise<string> {
  return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim();
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or '' where there is no /proc. */
async function startTimeOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export async function writeExecutorLease(scratchDir: string, pgid: number): Promise<void> {
  const lease: Lease = { pgid, bootId: await bootId(), startTime: await startTimeOf(pgid) };
  await writeFile(join(scratchDir, LEASE_FILE), JSON.stringify(lease), { mode: 0o600 });
}

/** Ends the executor a dead runner left running, if it provably is still that process. */
export async function endOrphanedExecutor(scratchDir: string, graceMs = 2_000): Promise<boolean> {
  const text = await readFile(join(scratchDir, LEASE_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const lease = LeaseSchema.safeParse(parsed);
  await rm(join(scratchDir, LEASE_FILE), { force: true });
  if (!lease.success || lease.data.bootId === '' || lease.data.bootId !== (await bootId())) return false;
  if (lease.data.startTime === '' || (await startTimeOf(lease.data.pgid)) !== lease.data.startTime)
    return false;
  if (!(await groupAlive(lease.data.pgid))) return false;
  await terminateGroup(lease.data.pgid, graceMs);
  return true;
}
