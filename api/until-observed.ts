/** What one look at the cache decided: the value waited for, a failure, or (undefined) not yet. */
export type Observation<T> = { value: T } | { error: Error } | undefined;

/**
 * Waits for what the read model will show, woken by its change notifications rather than polling:
 * `look` runs once now and again on every change until it decides; when `signal` aborts first, the
 * promise rejects with `aborted()`. The listener is added before the first look, so no change
 * slips between the two, and removed however the wait ends.
 */
export function untilObserved<T>(
  subscribe: (onChange: () => void) => () => void,
  look: () => Observation<T>,
  signal: AbortSignal,
  aborted: () => Error,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (): void => {
      settled = true;
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
    };
    const check = (): void => {
      if (settled) return;
      const seen = look();
      if (seen === undefined) return;
      finish();
      if ('value' in seen) resolve(seen.value);
      else reject(seen.error);
    };
    const onAbort = (): void => {
      if (settled) return;
      finish();
      reject(aborted());
    };
    const unsubscribe = subscribe(check);
    signal.addEventListener('abort', onAbort, { once: true });
    check();
    if (signal.aborted) onAbort();
  });
}
