// The live-event measurement's producer and its reading: a script printing its wall clock, and the
// latency of each line on arrival.
import { summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';
import { EVENT_COUNT, EVENT_RATE } from './config.js';
import { ms, report } from './report.js';

/**
 * Python printing its wall clock (ns) once per period, on a schedule of its own (sleeps to the next
 * tick, so a late tick does not shift the others), flushing each line. No single quotes: the
 * `shell` executor gets it inside '…'.
 */
export const CLOCK_SCRIPT = [
  'import sys, time',
  `n = ${EVENT_COUNT}`,
  `period = ${Math.round(1e9 / EVENT_RATE)}`,
  'start = time.monotonic_ns()',
  'for i in range(n):',
  '    delay = start + i * period - time.monotonic_ns()',
  '    if delay > 0:',
  '        time.sleep(delay / 1e9)',
  '    sys.stdout.write(str(time.time_ns()) + "\\n")',
  '    sys.stdout.flush()',
].join('\n');

export interface EventRun {
  latency: Summary;
  /** Lines received; EVENT_COUNT expected. */
  received: number;
  /** Latency of the last line: how far behind the tail was when the producer stopped. */
  last: number;
  /** From the first line's arrival to the last one's. */
  spanMs: number;
  /** p50 and max per second of the producer's clock: shows a start-up backlog or a stall. */
  perSecond: { p50: number; max: number }[];
}

/** Latency of clock lines (`content` ns) arriving at `arrival` (wall ms). */
export class ClockLines {
  readonly latencies: number[] = [];
  private readonly bySecond: number[][] = [];
  private firstPrinted: number | undefined;
  first: number | undefined;
  lastArrival = 0;

  add(content: string, arrival: number): void {
    if (!/^\d+$/.test(content)) throw new Error(`not a clock line: ${JSON.stringify(content.slice(0, 80))}`);
    const printed = Number(content) / 1e6;
    const latency = arrival - printed;
    this.latencies.push(latency);
    this.firstPrinted ??= printed;
    const second = Math.floor((printed - this.firstPrinted) / 1000);
    (this.bySecond[second] ??= []).push(latency);
    this.first ??= arrival;
    this.lastArrival = arrival;
  }

  result(): EventRun {
    return {
      latency: summarize(this.latencies),
      received: this.latencies.length,
      last: this.latencies.at(-1) ?? Number.NaN,
      spanMs: this.first === undefined ? 0 : this.lastArrival - this.first,
      perSecond: this.bySecond.map((values) => {
        const s = summarize(values);
        return { p50: s.p50, max: s.max };
      }),
    };
  }
}

export function reportEvents(label: string, run: EventRun): void {
  report(label, run.latency, 'p99');
  const rate = run.spanMs > 0 ? ((run.received - 1) / run.spanMs) * 1000 : Number.NaN;
  console.log(
    `  ${run.received}/${EVENT_COUNT} lines, last line ${ms(run.last)} late, ` +
      `first→last arrival ${(run.spanMs / 1000).toFixed(2)} s (${rate.toFixed(0)} lines/s)`,
  );
  const seconds = run.perSecond.map((s, i) => `${i}s ${s.p50.toFixed(1)}/${s.max.toFixed(1)}`);
  console.log(`  per second of printing, p50/max ms: ${seconds.join(', ')}`);
  if (run.received !== EVENT_COUNT) console.log(`  WARNING: expected ${EVENT_COUNT} lines`);
}
