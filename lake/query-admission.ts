import { LakeError } from './errors.js';

/**
 * How many queries the lake runs at once (docs/adr/0010-durable-incremental-lake.md, Bounded):
 * DuckDB shares its memory and threads among the queries it runs, so beyond a few each one only
 * gets slower and the memory limit nearer. At most `concurrent` run; up to `queued` more wait in
 * arrival order, each until its query's timeout (then 504 `timeout`); beyond that a query is
 * refused at once with 429 `busy`, which the API server answers as is for the client to retry.
 */

export interface AdmissionLimits {
  concurrent: number;
  queued: number;
}

/** The queue holds this many queries per one that may run. */
export const QUEUE_PER_RUNNING = 4;

/**
 * The limits from AGENTRY_LAKE_MAX_CONCURRENT_QUERIES; unset: one query per DuckDB thread, at
 * least two (a slow query leaves room for another).
 */
export function admissionLimits(configured: number | undefined, threads: number): AdmissionLimits {
  const concurrent = configured ?? Math.max(2, threads);
  return { concurrent, queued: concurrent * QUEUE_PER_RUNNING };
}

/** What GET /v1/status reports of the queries (the lake's metrics). */
export interface AdmissionCounts {
  running: number;
  queued: number;
  /** Refused with `busy` since the lake started. */
  refused: number;
}

interface Waiter {
  admit: () => void;
}

export class QueryAdmission {
  private running = 0;
  private refused = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: AdmissionLimits) {}

  /**
   * Resolves when a query may run, with the function to call once it has ended (once or more);
   * rejects with `busy` when the queue is full, `timeout` when `timeoutMs` passes in the queue
   * (the query's own time limit: a query that waited it out would be cut at once). A waiter whose
   * `signal` aborts (its caller hung up) leaves the queue.
   */
  async admit(timeoutMs: number, signal: AbortSignal): Promise<() => void> {
    await this.turn(timeoutMs, signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  counts(): AdmissionCounts {
    return { running: this.running, queued: this.waiting.length, refused: this.refused };
  }

  private turn(timeoutMs: number, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.running < this.limits.concurrent && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.queued) {
      this.refused++;
      return Promise.reject(
        new LakeError(
          'busy',
          `the lake runs ${this.limits.concurrent} queries at once and ${this.limits.queued} wait already; retry in a moment`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const leave = (error: LakeError): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(error);
      };
      const onAbort = (): void => {
        leave(new LakeError('timeout', 'the caller went away while the query waited for a turn to run'));
      };
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        leave(
          new LakeError('timeout', `the query waited ${timeoutMs} ms for a turn to run and was given up`),
        );
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** The finished query's place goes to the first waiter, or back to the pool. */
  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.running--;
    else next.admit();
  }
}
