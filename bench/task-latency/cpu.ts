// CPU time of the processes on the event path during a live run: this one (API, operator and the
// client) and the runners it started (from /proc, Linux only).
import { readFile, readdir } from 'node:fs/promises';

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  cpuMs: number;
}

async function procStat(pid: number): Promise<ProcStat | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // After the command in parentheses: state ppid … utime (14th field) stime (15th).
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { ppid: Number(fields[1]), cpuMs: (ticks / TICKS_PER_SECOND) * 1000 };
  } catch {
    return undefined; // gone meanwhile, or not Linux
  }
}

/** CPU ms so far of this process's descendants whose command line has `needle`. */
async function descendantsCpuMs(needle: string): Promise<number> {
  const stats = new Map<number, ProcStat>();
  const pids = (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name)).map(Number);
  for (const pid of pids) {
    const stat = await procStat(pid);
    if (stat !== undefined) stats.set(pid, stat);
  }
  const descends = (pid: number): boolean => {
    for (let at = stats.get(pid)?.ppid; at !== undefined && at > 1; at = stats.get(at)?.ppid)
      if (at === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, stat] of stats) {
    if (!descends(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle)) total += stat.cpuMs;
  }
  return total;
}

export interface CpuSample {
  /** This process: the API server, the operator and the bench's own client. */
  api: number;
  runners: number;
}

export async function cpuNow(): Promise<CpuSample> {
  const { user, system } = process.cpuUsage();
  return { api: (user + system) / 1000, runners: await descendantsCpuMs('cli/main.ts\0runner') };
}

/** CPU ms spent between two samples, per process group. */
export const cpuSpent = (from: CpuSample, to: CpuSample): CpuSample => ({
  api: to.api - from.api,
  runners: to.runners - from.runners,
});
