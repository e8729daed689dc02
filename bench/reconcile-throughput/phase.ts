// What each side measures: from its first create until every one is ready.
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from '../support/stats.js';
import { POLL_MS, STALL_MS } from './config.js';

export interface PhaseResult {
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

/** The phase's result from the ready times `waitAllReady` gave. */
export const phaseResult = (
  ready: readonly number[],
  figures: Omit<PhaseResult, 'p50Ms' | 'p95Ms'>,
): PhaseResult => ({
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
