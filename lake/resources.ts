import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

/**
 * What the lake may use of its machine, for DuckDB's memory_limit and threads defaults. In a
 * pod the cgroup limit is the real ceiling (os.totalmem() reports the node's memory); DuckDB
 * also needs room outside its buffer pool, hence three quarters.
 */

const MIB = 1024 * 1024;

/** cgroup v2, then v1; undefined when unlimited or unreadable (not in a container). */
export function cgroupMemoryLimit(read: (path: string) => string = readText): number | undefined {
  for (const path of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    const text = read(path).trim();
    if (!/^\d+$/.test(text)) continue; // "max", or nothing there
    const bytes = Number(text);
    // cgroup v1 writes a huge number (about 2^63) for "no limit".
    if (bytes > 0 && bytes < 2 ** 60) return bytes;
  }
  return undefined;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** DuckDB's memory_limit when none is configured: 75% of the cgroup limit or of total memory. */
export function defaultMemoryLimit(limitBytes = cgroupMemoryLimit(), total = totalmem()): string {
  const ceiling = Math.min(limitBytes ?? total, total);
  return `${Math.max(64, Math.floor((ceiling * 0.75) / MIB))}MiB`;
}

/** CPUs the cgroup's quota allows (cgroup v2 `cpu.max`, then v1's quota and period); undefined when unlimited. */
export function cgroupCpuLimit(read: (path: string) => string = readText): number | undefined {
  const v2 = /^(\d+) (\d+)$/.exec(read('/sys/fs/cgroup/cpu.max').trim());
  const quota = v2?.[1] ?? read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us').trim();
  const period = v2?.[2] ?? read('/sys/fs/cgroup/cpu/cpu.cfs_period_us').trim();
  if (!/^\d+$/.test(quota) || !/^\d+$/.test(period) || Number(period) === 0) return undefined; // "max" or -1
  return Math.max(1, Math.ceil(Number(quota) / Number(period)));
}

/** DuckDB's threads when none are configured: the CPUs this process may use (a pod's CPU limit). */
export function defaultThreads(cpuLimit = cgroupCpuLimit(), cpus = availableParallelism()): number {
  return Math.max(1, Math.min(cpus, cpuLimit ?? cpus));
}
