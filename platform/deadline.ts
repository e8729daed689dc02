/**
 * `work`'s outcome, or `expired()` as soon as `signal` aborts (at once when it already has). The
 * work itself goes on unobserved: this bounds how long a caller waits, not the work.
 */
export function settleWithin<T>(work: Promise<T>, signal: AbortSignal, expired: () => Error): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(expired());
  }
  let onAbort = (): void => undefined;
  const expiry = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(expired());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, expiry]).finally(() => {
    signal.removeEventListener('abort', onAbort);
  });
}
