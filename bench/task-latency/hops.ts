// Where an event's latency goes: the bench-only marks (platform/event-trace.ts) of the runner (its
// state directory's event-trace.tsv) and the API (this process), joined by seq with the producer's
// clock and the client's arrival.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { takeEventMarks } from '../../platform/event-trace.js';
import type { EventHop } from '../../platform/event-trace.js';
import { summarize } from '../support/stats.js';
import { ms } from './report.js';

/** One clock line as the client saw it. */
export interface ClockSample {
  seq: number;
  /** The producer's wall clock when it printed the line (ms). */
  printed: number;
  /** The client's wall clock when the chunk with it arrived (ms). */
  arrival: number;
}

const HOPS: readonly EventHop[] = ['runnerRead', 'runnerDurable', 'runnerSent', 'apiReceived', 'apiSent'];

/** Each stretch between two points, named for what happens in it. */
const STRETCHES = [
  ['executor write → runner read (pipe, runner wake-up)', 'printed', 'runnerRead'],
  ['runner read → durable (group commit: write + fdatasync)', 'runnerRead', 'runnerDurable'],
  ['durable → runner socket write', 'runnerDurable', 'runnerSent'],
  ['runner socket → API receipt', 'runnerSent', 'apiReceived'],
  ['API receipt → API socket write (relay)', 'apiReceived', 'apiSent'],
  ['API socket → client receipt', 'apiSent', 'arrival'],
  ['end to end: executor write → client receipt', 'printed', 'arrival'],
] as const;

type Point = EventHop | 'printed' | 'arrival';

/** The marks of `taskId` by hop and seq, from the API's memory and every runner's trace file under `dir`. */
async function readMarks(dir: string, taskId: string): Promise<Map<string, Map<number, number>>> {
  const lines = takeEventMarks();
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('event-trace.tsv'));
  for (const file of files) lines.push(...(await readFile(join(dir, file), 'utf8')).split('\n'));
  const marks = new Map<string, Map<number, number>>(HOPS.map((hop) => [hop, new Map()]));
  for (const line of lines) {
    const [hop, task, seq, at] = line.split('\t');
    if (task !== taskId || hop === undefined || seq === undefined || at === undefined) continue;
    const byHop = marks.get(hop);
    // The first time an event passes a point (a replay after a reconnect passes it again).
    if (byHop !== undefined && !byHop.has(Number(seq))) byHop.set(Number(seq), Number(at));
  }
  return marks;
}

/**
 * Prints p50/p99 of each stretch, and for the slowest 1 % of events (end to end) the median of
 * each stretch: the stretch that holds the tail stands out.
 */
export async function reportHops(
  dir: string,
  taskId: string,
  samples: readonly ClockSample[],
): Promise<void> {
  const marks = await readMarks(dir, taskId);
  const at = (sample: ClockSample, point: Point): number | undefined =>
    point === 'printed' || point === 'arrival' ? sample[point] : marks.get(point)?.get(sample.seq);
  const traced = samples.filter((s) => HOPS.every((hop) => at(s, hop) !== undefined));
  if (traced.length === 0) {
    console.log('  per hop: no marks (AGENTRY_EVENT_TRACE is off in this build)');
    return;
  }
  const byLatency = [...traced].sort((a, b) => b.arrival - b.printed - (a.arrival - a.printed));
  const tail = byLatency.slice(0, Math.max(1, Math.ceil(traced.length / 100)));
  const stretch = (s: ClockSample, from: Point, to: Point): number =>
    (at(s, to) ?? NaN) - (at(s, from) ?? NaN);
  console.log(
    `  per hop (${traced.length}/${samples.length} events traced): p50 / p99 / median within the slowest 1 %`,
  );
  for (const [label, from, to] of STRETCHES) {
    const all = summarize(traced.map((s) => stretch(s, from, to)));
    const slow = summarize(tail.map((s) => stretch(s, from, to)));
    console.log(`    ${label}: ${ms(all.p50)} / ${ms(all.p99)} / ${ms(slow.p50)}`);
  }
}
