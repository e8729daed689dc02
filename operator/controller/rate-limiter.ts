/** Decides how long a key waits before it is retried. */
export interface RateLimiter {
  /** The delay before the next retry of `key`; counts a failure of it. */
  when(key: string): number;
  /** The key succeeded: its back-off starts again from the beginning. */
  forget(key: string): void;
  /** How many failures of `key` have been counted since it was last forgotten. */
  retries(key: string): number;
}

/** Per-key exponential back-off: base, 2·base, 4·base … capped. A failing key slows only itself. */
export class ExponentialBackoffRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 5 * 60_000,
  ) {}

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2^failures overflows to Infinity long after the cap; min() keeps the result finite.
    return Math.min(this.baseMs * 2 ** failures, this.maxMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A global token bucket (qps, burst): however many keys fail at once, retries as a whole never
 * exceed the rate. Tokens may go negative: each call reserves the next free slot, like Go's
 * rate.Limiter.Reserve, so a burst of failures is spread out instead of retried together.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  when(_key: string): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_key: string): void {
    // The bucket is global: one key's success gives no tokens back.
  }

  retries(_key: string): number {
    return 0;
  }
}

/** The longest delay any of the limiters asks for (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  retries(key: string): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.retries(key)));
  }
}

/** client-go's default controller rate limiter: per-key 5 ms doubling to 5 min, and 10 qps / burst 100. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new MaxOfRateLimiter(
    new ExponentialBackoffRateLimiter(5, 5 * 60_000),
    new TokenBucketRateLimiter(10, 100),
  );
}
