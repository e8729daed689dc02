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

/**
 * Settles as `work` does, or rejects with `onTimeout()` after `ms`, whichever comes first. A plain
 * timer, held by the event loop: on Node 20 an AbortSignal.timeout (or an AbortSignal.any over one)
 * that only the waiting call refers to may be garbage-collected, and then it never fires.
 */
export function withinMs<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  const clock = new AbortController();
  const timer = setTimeout(() => {
    clock.abort();
  }, ms);
  return settleWithin(work, clock.signal, onTimeout).finally(() => {
    clearTimeout(timer);
  });
}
