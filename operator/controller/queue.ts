import { defaultControllerRateLimiter } from './rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

/** Where the queue reports its depth and additions (the controller binds these to Prometheus). */
export interface QueueMetrics {
  depth(length: number): void;
  added(): void;
}

export interface WorkQueueOptions {
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
}

interface Timer {
  due: number;
  handle: NodeJS.Timeout;
}

/**
 * A work queue of keys with client-go's guarantees: a key waiting in the queue is queued once however
 * often it is added (dirty set); a key added while a worker processes it is queued again only when
 * that worker calls `done` (processing set), so no key is ever processed by two workers at once and
 * no change is lost. Delayed adds (`addAfter`) keep one timer per key, the earliest; rate-limited adds
 * wait as long as the rate limiter says.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly timers = new Map<string, Timer>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: QueueMetrics | undefined;
  private shuttingDown = false;
  private drained: (() => void) | undefined;
  private drain: Promise<void> | undefined;

  constructor(options: WorkQueueOptions = {}) {
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.metrics = options.metrics;
  }

  /** Keys waiting for a worker (not those being processed or waiting on a timer). */
  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.metrics?.added();
    // Being processed: `done` queues it again, so the worker that has it now is the only one.
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `delayMs`. One timer per key: an earlier deadline replaces a later one, never both. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const due = performance.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing !== undefined) {
      if (existing.due <= due) return;
      clearTimeout(existing.handle);
    }
    const handle = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    // The timer alone must not keep a process alive that has nothing else left to do.
    handle.unref();
    this.timers.set(key, { due, handle });
  }

  /** Adds `key` after the rate limiter's delay: per-key exponential back-off and the global bucket. */
  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets the back-off of `key` (it succeeded). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  retries(key: string): number {
    return this.rateLimiter.retries(key);
  }

  /** The next key to process, waiting for one; undefined once the queue shuts down. Call `done` after. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The worker finished `key`: if it was added meanwhile, it is queued again now. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    if (this.shuttingDown && this.processing.size === 0) this.drained?.();
  }

  /**
   * Stops handing out keys: `get` returns undefined from now on, keys still waiting are dropped
   * (reconcilers are level-based: the next start lists everything again) and timers are cancelled.
   * Resolves once every key being processed is `done`.
   */
  shutdown(): Promise<void> {
    if (this.drain !== undefined) return this.drain;
    this.shuttingDown = true;
    for (const timer of this.timers.values()) clearTimeout(timer.handle);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
    this.queue.length = 0;
    this.metrics?.depth(0);
    this.drain =
      this.processing.size === 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            this.drained = resolve;
          });
    return this.drain;
  }

  private push(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.queue.push(key);
      this.metrics?.depth(this.queue.length);
      return;
    }
    waiter(this.take(key));
  }

  private take(key: string): string {
    this.dirty.delete(key);
    this.processing.add(key);
    this.metrics?.depth(this.queue.length);
    return key;
  }
}
