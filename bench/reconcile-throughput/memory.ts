// This process's memory, as the measured phase reports it (the operator runs in this process).

export interface Memory {
  rssMiB: number;
  heapUsedMiB: number;
}

export const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

export function memory(): Memory {
  const usage = process.memoryUsage();
  return { rssMiB: mib(usage.rss), heapUsedMiB: mib(usage.heapUsed) };
}

/** A full collection when node runs with --expose-gc (the npm script does), else nothing. */
export function collectGarbage(): void {
  const gc: unknown = Reflect.get(globalThis, 'gc');
  if (typeof gc === 'function') Reflect.apply(gc, undefined, []);
}
