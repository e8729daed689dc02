import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, posix } from 'node:path';

/**
 * CPUs a cgroup v2 `cpu.max` allows ("<quota> <period>", or "max <period>" for no limit), rounded
 * up (1.5 CPUs can keep two processes busy half the time); undefined when unlimited or unreadable.
 */
export function cpusOfCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || period === undefined || quota === 'max') return undefined;
  const [q, p] = [Number(quota), Number(period)];
  if (!Number.isInteger(q) || !Number.isInteger(p) || q <= 0 || p <= 0) return undefined;
  return Math.max(1, Math.ceil(q / p));
}

/** This process's cgroup v2 path, from /proc/self/cgroup's `0::<path>` line; undefined on cgroup v1. */
export function cgroupPathOf(procSelfCgroup: string): string | undefined {
  const line = procSelfCgroup.split('\n').find((entry) => entry.startsWith('0::'));
  return line === undefined ? undefined : line.slice('0::'.length).trim() || '/';
}

const readOrUndefined = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The tightest `cpu.max` from the process's cgroup up to the root: a limit set on a parent (the
 * pod's cgroup, above the container's) binds the children too. In a container with its own cgroup
 * namespace the path is `/` and the container's limit is the root's file.
 */
export function cgroupCpuLimit(
  files: { cgroupRoot: string; procSelfCgroup: string } = {
    cgroupRoot: '/sys/fs/cgroup',
    procSelfCgroup: '/proc/self/cgroup',
  },
): number | undefined {
  const own = readOrUndefined(files.procSelfCgroup);
  const path = own === undefined ? undefined : cgroupPathOf(own);
  if (path === undefined) return undefined;
  let limit: number | undefined;
  for (let dir = posix.normalize(path); ; dir = posix.dirname(dir)) {
    const text = readOrUndefined(join(files.cgroupRoot, dir, 'cpu.max'));
    const cpus = text === undefined ? undefined : cpusOfCpuMax(text);
    if (cpus !== undefined) limit = Math.min(limit ?? cpus, cpus);
    if (dir === '/') return limit;
  }
}

/** The CPUs this process may use: the cgroup quota when one is set, never more than the machine offers. */
export function usableCpus(limit: number | undefined = cgroupCpuLimit()): number {
  const machine = availableParallelism();
  return limit === undefined ? machine : Math.max(1, Math.min(limit, machine));
}
