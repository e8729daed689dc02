// Checking and summarizing what arrived: exactly once each, at the right receiver, and how fast.
import { perSecond, ms, ratio } from '../support/format.js';
import { summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import type { Recorder } from './receivers.js';

const latencyLine = (s: Summary): string =>
  `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (n=${s.n})`;

export interface Check {
  expected: number;
  arrivedOnce: number;
  duplicates: number;
  missing: number;
  unexpected: number;
  misrouted: number;
}

function check(expected: ReadonlyMap<string, { webhook: string }>, recorder: Recorder): Check {
  let arrivedOnce = 0;
  let duplicates = 0;
  let missing = 0;
  let misrouted = 0;
  for (const [id, { webhook }] of expected) {
    const list = recorder.arrivals.get(id) ?? [];
    if (list.length === 0) missing++;
    else if (list.length === 1) arrivedOnce++;
    else duplicates += list.length - 1;
    misrouted += list.filter((arrival) => arrival.webhook !== webhook).length;
  }
  const unexpected = [...recorder.arrivals.keys()].filter((id) => !expected.has(id)).length;
  return { expected: expected.size, arrivedOnce, duplicates, missing, unexpected, misrouted };
}

export const checkLine = (c: Check, withoutId: number): string =>
  `${c.arrivedOnce}/${c.expected} arrived exactly once; duplicates ${c.duplicates}, missing ${c.missing}, ` +
  `unexpected ${c.unexpected}, at the wrong receiver ${c.misrouted}, without webhook-id ${withoutId}`;

export const checkFailed = (c: Check, withoutId: number): boolean =>
  c.arrivedOnce !== c.expected || c.duplicates + c.missing + c.unexpected + c.misrouted + withoutId > 0;

/** Delivery i: when its transition was written (or released, for the floor) and when it arrived. */
interface Timed {
  id: string;
  webhook: string;
  sent: number;
  arrived: number;
}

export interface DeliveryRun {
  label: string;
  timed: Timed[];
  /** First write (or release) → last arrival. */
  spanMs: number;
  latency: Summary;
  check: Check;
  withoutId: number;
}

export function deliveryRun(
  label: string,
  sent: ReadonlyMap<string, { webhook: string; at: number }>,
  recorder: Recorder,
  start: number,
): DeliveryRun {
  const timed: Timed[] = [];
  for (const [id, { webhook, at }] of sent) {
    const first = recorder.arrivals.get(id)?.[0];
    if (first !== undefined) timed.push({ id, webhook, sent: at, arrived: first.at });
  }
  const last = Math.max(...timed.map((t) => t.arrived));
  return {
    label,
    timed,
    spanMs: last - start,
    latency: summarize(timed.map((t) => t.arrived - t.sent)),
    check: check(sent, recorder),
    withoutId: recorder.withoutId,
  };
}

export function reportDelivery(run: DeliveryRun): void {
  console.log(
    `${run.label}: ${perSecond(run.timed.length, run.spanMs)} (${run.timed.length} in ${ms(run.spanMs)}); ` +
      `latency ${latencyLine(run.latency)}`,
  );
  console.log(`  ${checkLine(run.check, run.withoutId)}`);
}

/** Latency by tenth of the run (in arrival order): shows a backlog building or a stall. */
export function perTenth(run: DeliveryRun): string {
  const ordered = [...run.timed].sort((a, b) => a.sent - b.sent);
  const size = Math.ceil(ordered.length / 10);
  const tenths: string[] = [];
  for (let i = 0; i < ordered.length; i += size) {
    const slice = ordered.slice(i, i + size).map((t) => t.arrived - t.sent);
    const s = summarize(slice);
    tenths.push(`${s.p50.toFixed(0)}/${s.max.toFixed(0)}`);
  }
  return tenths.join(' ');
}

/** Deliveries that took at least 1 s: the controller looks again at a busy webhook after 1 s. */
export const overOneSecond = (run: DeliveryRun): number =>
  run.timed.filter((t) => t.arrived - t.sent >= 1000).length;

export function reportAgainstFloor(name: string, run: DeliveryRun, base: DeliveryRun): void {
  const throughput = (r: DeliveryRun): number => r.timed.length / r.spanMs;
  console.log(
    `${name}: throughput ${ratio(throughput(run), throughput(base))} of the floor's, ` +
      `latency p50 ${ratio(run.latency.p50, base.latency.p50)} / p95 ${ratio(run.latency.p95, base.latency.p95)} / ` +
      `p99 ${ratio(run.latency.p99, base.latency.p99)} the floor's`,
  );
}
