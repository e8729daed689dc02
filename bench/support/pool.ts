/**
 * Runs `work` over `items` with `concurrency` in flight; the first failure rejects (the rest stop
 * taking items), and so does `signal` once aborted.
 */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<unknown>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      signal?.throwIfAborted();
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** 0, 1, …, count − 1: the items of a pool over indices. */
export const indices = (count: number): number[] => Array.from({ length: count }, (_, i) => i);
