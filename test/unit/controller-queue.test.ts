import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { WorkQueue } from '../../operator/controller/queue.js';
import {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
} from '../../operator/controller/rate-limiter.js';

/** Resolves after the current macrotask: lets pending promise callbacks run. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WorkQueue', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('queues a key added several times while waiting only once', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.length).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(queue.length).toBe(0);
  });

  it('holds back a key added while it is processed and queues it again when processing is done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    expect(queue.length).toBe(0);
    queue.done('a');
    expect(key).toBe('a');
    expect(queue.length).toBe(1);
    expect(await queue.get()).toBe('a');
  });

  it('hands a waiting worker the next key as soon as it is added', async () => {
    const queue = new WorkQueue();
    const next = queue.get();
    queue.add('x');
    await expect(next).resolves.toBe('x');
  });

  it('never lets two workers process one key at once, and processes every key after its last add', async () => {
    const queue = new WorkQueue();
    const active = new Set<string>();
    const overlaps: string[] = [];
    const lastAdd = new Map<string, number>();
    const lastStart = new Map<string, number>();
    let clock = 0;
    const worker = async (): Promise<void> => {
      for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
        if (active.has(key)) overlaps.push(key);
        active.add(key);
        lastStart.set(key, ++clock);
        // Yield a varying number of times so workers interleave.
        for (let i = 0; i < (clock % 5) + 1; i++) await tick();
        active.delete(key);
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    const keys = ['k0', 'k1', 'k2', 'k3'];
    for (let round = 0; round < 200; round++) {
      const key = keys[round % keys.length]!;
      queue.add(key);
      lastAdd.set(key, ++clock);
      if (round % 3 === 0) await tick();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    await queue.shutdown();
    await Promise.all(workers);
    expect(overlaps).toEqual([]);
    for (const key of keys) expect(lastStart.get(key)).toBeGreaterThan(lastAdd.get(key)!);
  });

  it('adds a key after the delay of addAfter', async () => {
    jest.useFakeTimers();
    const queue = new WorkQueue();
    queue.addAfter('a', 100);
    jest.advanceTimersByTime(99);
    expect(queue.length).toBe(0);
    jest.advanceTimersByTime(1);
    expect(queue.length).toBe(1);
    await expect(queue.get()).resolves.toBe('a');
  });

  it('keeps only the earliest of several addAfter timers of one key', () => {
    jest.useFakeTimers();
    const added: string[] = [];
    const queue = new WorkQueue({ metrics: { depth: () => undefined, added: () => added.push('a') } });
    queue.addAfter('a', 500);
    queue.addAfter('a', 50);
    queue.addAfter('a', 300);
    jest.advanceTimersByTime(50);
    expect(added).toHaveLength(1);
    jest.advanceTimersByTime(1000);
    expect(added).toHaveLength(1);
  });

  it('retries a rate-limited key after its back-off', () => {
    jest.useFakeTimers();
    const queue = new WorkQueue({ rateLimiter: new ExponentialBackoffRateLimiter(5, 1000) });
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    // The second failure asks for 10 ms, but the first (5 ms) timer is earlier and wins.
    jest.advanceTimersByTime(4);
    expect(queue.length).toBe(0);
    jest.advanceTimersByTime(1);
    expect(queue.length).toBe(1);
    expect(queue.retries('a')).toBe(2);
  });

  it('resets the back-off of a key on forget', () => {
    const queue = new WorkQueue({ rateLimiter: new ExponentialBackoffRateLimiter(5, 1000) });
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    queue.forget('a');
    expect(queue.retries('a')).toBe(0);
  });

  it('returns undefined from get once shut down, also to workers already waiting', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    await queue.shutdown();
    await expect(waiting).resolves.toBeUndefined();
    queue.add('a');
    await expect(queue.get()).resolves.toBeUndefined();
  });

  it('resolves shutdown only after the keys in flight are done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    await queue.get();
    let drained = false;
    const shutdown = queue.shutdown().then(() => {
      drained = true;
    });
    await tick();
    expect(drained).toBe(false);
    await expect(queue.get()).resolves.toBeUndefined();
    queue.done('a');
    await shutdown;
    expect(drained).toBe(true);
  });

  it('cancels delayed adds on shutdown', async () => {
    jest.useFakeTimers();
    const queue = new WorkQueue();
    queue.addAfter('a', 10);
    await queue.shutdown();
    jest.advanceTimersByTime(100);
    expect(queue.length).toBe(0);
  });

  it('reports its depth to its metrics', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ metrics: { depth: (n) => depths.push(n), added: () => undefined } });
    queue.add('a');
    queue.add('b');
    await queue.get();
    expect(depths).toEqual([1, 2, 1]);
  });
});

describe('rate limiters', () => {
  it('double the per-key back-off from 5 ms up to the cap', () => {
    const limiter = new ExponentialBackoffRateLimiter(5, 100);
    const delays = Array.from({ length: 7 }, () => limiter.when('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 100, 100]);
  });

  it('keep the back-off of each key apart', () => {
    const limiter = new ExponentialBackoffRateLimiter(5, 100);
    limiter.when('a');
    limiter.when('a');
    expect(limiter.when('b')).toBe(5);
  });

  it('start the back-off again from 5 ms after forget', () => {
    const limiter = new ExponentialBackoffRateLimiter(5, 100);
    limiter.when('a');
    limiter.when('a');
    limiter.forget('a');
    expect(limiter.when('a')).toBe(5);
  });

  it('let a token bucket pass its burst at once, then space retries at its rate', () => {
    let now = 0;
    const bucket = new TokenBucketRateLimiter(10, 3, () => now);
    const delays = Array.from({ length: 5 }, (_, i) => bucket.when(`k${i}`));
    expect(delays).toEqual([0, 0, 0, 100, 200]);
    now = 1000;
    expect(bucket.when('later')).toBe(0);
  });

  it('wait for the longer of per-key back-off and the global bucket', () => {
    const now = 0;
    const limiter = new MaxOfRateLimiter(
      new ExponentialBackoffRateLimiter(5, 1000),
      new TokenBucketRateLimiter(10, 1, () => now),
    );
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('b')).toBe(100);
  });
});
