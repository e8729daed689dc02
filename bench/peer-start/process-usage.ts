// A child process's CPU time and memory, read from /proc (Linux): what a controller spent in a phase.
import { readFile } from 'node:fs/promises';

export interface ProcessUsage {
  /** User + system CPU seconds since the process started. */
  cpuSeconds: number;
  rssMiB: number;
  /** The highest resident set since the process started (VmHWM). */
  peakRssMiB: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux architecture node runs on

const kib = (status: string, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match === null ? Number.NaN : Number(match[1]);
};

export async function processUsage(pid: number): Promise<ProcessUsage> {
  const [stat, status] = await Promise.all([
    readFile(`/proc/${pid}/stat`, 'utf8'),
    readFile(`/proc/${pid}/status`, 'utf8'),
  ]);
  // Fields after the command name, which is in parentheses and may hold spaces: utime, stime are 14, 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return {
    cpuSeconds: Math.round((ticks / TICKS_PER_SECOND) * 100) / 100,
    rssMiB: Math.round(kib(status, 'VmRSS') / 102.4) / 10,
    peakRssMiB: Math.round(kib(status, 'VmHWM') / 102.4) / 10,
  };
}
