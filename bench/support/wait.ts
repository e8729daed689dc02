// Waiting in a benchmark: to a point in time, or for work with a bound; both give up on interruption.
import { setTimeout as sleep } from 'node:timers/promises';
import { until as poll } from '../../test/support/until.js';

/** Sleeps until `performance.now()` reaches `at`. */
export async function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  const wait = at - performance.now();
  if (wait > 0) await sleep(wait, undefined, { signal });
}

/**
 * Runs `work` with a signal that aborts after `timeoutMs` or on `interrupted`, and gives up on it then
 * even if it ignores the signal (its leftovers are stopped with the rest of the run).
 */
export async function within<T>(
  what: string,
  timeoutMs: number,
  interrupted: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = AbortSignal.any([interrupted, AbortSignal.timeout(timeoutMs)]);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => {
      reject(
        interrupted.aborted
          ? (interrupted.reason as Error)
          : new Error(`${what}: no result within ${timeoutMs} ms`),
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined); // rejected only when it wins the race, or after it
  try {
    return await Promise.race([work(signal), aborted]);
  } catch (err) {
    if (interrupted.aborted) throw interrupted.reason;
    if (signal.aborted) throw new Error(`${what}: no result within ${timeoutMs} ms`, { cause: err });
    throw err;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * test/support's until (polls `check` until it yields a value), giving up on `signal` too; a timeout's
 * error ends with `state()`, how far it got.
 */
export async function until<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  options: { signal: AbortSignal; pollMs: number; state?: () => string },
): Promise<T> {
  // A check's own failure goes out as it is; only a timeout gets the state.
  const failure = { inCheck: false };
  const checked = async (): Promise<T | undefined> => {
    options.signal.throwIfAborted();
    try {
      return await check();
    } catch (err) {
      failure.inCheck = true;
      throw err;
    }
  };
  try {
    return await poll(what, checked, timeoutMs, options.pollMs);
  } catch (err) {
    if (failure.inCheck || options.state === undefined) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}: ${options.state()}`, { cause: err });
  }
}
