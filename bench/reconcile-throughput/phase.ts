// What each side measures: from its first create until every one is ready.
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from '../support/stats.js';
import { indices, pool } from '../support/pool.js';
import { CONCURRENCY, N, POLL_MS, STALL_MS } from './config.js';

export interface PhaseResult {
  /** performance.now() at the first create: what the times below count from. */
  startedAt: number;
  totalMs: number;
  createdMs: number;
  p50Ms: number;
  p95Ms: number;
  requests: number;
  sockets: number;
}

export const seconds = (ms: number): string => (ms / 1000).toFixed(2);

/** Polls `readyNames` until `count` names are ready; the time each was first seen ready, from `start`. */
export async function waitAllReady(
  what: string,
  count: number,
  start: number,
  readyNames: () => Promise<string[]>,
): Promise<number[]> {
  const seen = new Map<string, number>();
  let progressAt = 0;
  while (seen.size < count) {
    const now = performance.now() - start;
    if (now - progressAt > STALL_MS) {
      throw new Error(`${what}: ${seen.size}/${count} ready, none more for ${STALL_MS} ms`);
    }
    for (const name of await readyNames()) {
      if (seen.has(name)) continue;
      seen.set(name, now);
      progressAt = now;
    }
    if (seen.size < count) await sleep(POLL_MS);
  }
  return [...seen.values()].sort((a, b) => a - b);
}

/**
 * Calls `create(i)` for i < N, CONCURRENCY at a time, from `start` on, while `waitAllReady` polls
 * `readyNames`; when each was first seen ready and when the creates were done.
 */
export async function createUntilAllReady(
  what: string,
  start: number,
  create: (i: number) => Promise<unknown>,
  readyNames: () => Promise<string[]>,
): Promise<{ ready: number[]; createdMs: number }> {
  let createdMs = 0;
  const creating = pool(indices(N), CONCURRENCY, create).then(() => {
    createdMs = performance.now() - start;
  });
  const ready = await waitAllReady(what, N, start, readyNames);
  await creating;
  return { ready, createdMs };
}

/** The phase's result from the ready times `waitAllReady` gave. */
export const phaseResult = (
  ready: readonly number[],
  figures: Omit<PhaseResult, 'p50Ms' | 'p95Ms'>,
): PhaseResult => ({
  startedAt: figures.startedAt,
  totalMs: figures.totalMs,
  createdMs: figures.createdMs,
  p50Ms: percentile(ready, 50),
  p95Ms: percentile(ready, 95),
  requests: figures.requests,
  sockets: figures.sockets,
});

export function describePhase(label: string, phase: PhaseResult): void {
  console.log(
    `${label}: all ready in ${seconds(phase.totalMs)} s (creates done at ${seconds(phase.createdMs)} s; ` +
      `p50 ${seconds(phase.p50Ms)} s, p95 ${seconds(phase.p95Ms)} s)` +
      // A controller in a process of its own: its requests are not counted here.
      (Number.isNaN(phase.requests) ? '' : `; ${phase.requests} requests, ${phase.sockets} new connections`),
  );
}
