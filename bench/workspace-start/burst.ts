// The pool under a burst: a full pool of `burstPool` refilling while `burstClaims` tasks without
// workspaceId arrive at `burstRate` per second (open loop: each POST at its own time, whatever the
// earlier ones are doing). Each task's POST → `init`, split by how its workspace came to be (claimed
// from the pool, or a cold fallback), and the fewest ready members seen while it ran.
import { interruption } from '../task-latency/config.js';
import { startOnce } from '../task-latency/starts.js';
import type { StartSample } from '../task-latency/starts.js';
import { pool } from '../support/pool.js';
import { progress } from '../support/stats.js';
import { sleepUntil } from '../support/wait.js';
import { availableMembers, ensurePool, origin, poolFilled, removePool } from './pool.js';
import type { Target } from './target.js';
import { deleteWorkspace } from './workspaces.js';

export interface BurstSamples {
  /** Every claim's POST → `init`, ms. */
  all: number[];
  claimed: number[];
  cold: number[];
  /** The fewest ready members the pool had while the claims arrived (sampled every 200 ms). */
  fewestReady: number;
  /** Tasks that did not reach `done` (the first reason is printed). */
  failed: number;
  /** First POST → last task done, ms. */
  spanMs: number;
}

/** Samples the pool's ready members every 200 ms until `stop` aborts; answers the fewest seen. */
async function watchFewestReady(target: Target, stop: AbortSignal): Promise<number> {
  let fewest = Number.POSITIVE_INFINITY;
  while (!stop.aborted) {
    fewest = Math.min(fewest, (await availableMembers(target)).ready);
    await sleepUntil(performance.now() + 200, stop).catch(() => undefined);
  }
  return fewest;
}

const settle = <T>(work: Promise<T>): Promise<PromiseSettledResult<T>> =>
  work.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );

export async function burstPhase(target: Target): Promise<BurstSamples> {
  const { burstPool, burstClaims, burstRate } = target.sizes;
  await ensurePool(target, burstPool);
  progress(`burst: waiting for ${burstPool} ready members`);
  await poolFilled(target, burstPool);
  progress(`burst: ${burstClaims} claims at ${burstRate}/s`);
  const watching = new AbortController();
  const fewestReady = watchFewestReady(target, watching.signal);
  const began = performance.now();
  // Settled as they are made: a task failing while later ones are still to be sent is counted, not thrown.
  const starts: Promise<PromiseSettledResult<StartSample>>[] = [];
  for (let i = 0; i < burstClaims; i++) {
    await sleepUntil(began + (i * 1000) / burstRate, interruption.signal);
    starts.push(settle(startOnce(target.endpoint, undefined)));
  }
  const settled = await Promise.all(starts);
  const spanMs = performance.now() - began;
  watching.abort();
  const failed = settled.flatMap((s): unknown[] => (s.status === 'rejected' ? [s.reason] : []));
  if (failed.length > 0) progress(`burst: ${failed.length} tasks failed; the first: ${String(failed[0])}`);
  const samples = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const claimed: number[] = [];
  const cold: number[] = [];
  for (const sample of samples)
    ((await origin(target, sample.workspaceId)) === 'claimed' ? claimed : cold).push(sample.init);
  await removePool(target);
  progress('burst: deleting its workspaces');
  await pool(samples, 4, (sample) => deleteWorkspace(target, sample.workspaceId), interruption.signal);
  return {
    all: samples.map((s) => s.init),
    claimed,
    cold,
    fewestReady: await fewestReady,
    failed: failed.length,
    spanMs,
  };
}
