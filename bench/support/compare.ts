// A measured path against its baseline, in the same run: timings taken in turn, and their table.
import { summarize } from './stats.js';
import type { Summary } from './stats.js';

/** Milliseconds `run` takes. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/**
 * `runs` timings each of `measured` and `baseline` after `warmup` untimed rounds of both, alternating
 * which goes first, so neither always runs on a machine the other just warmed.
 */
export async function alternating(
  runs: number,
  measured: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  warmup = 0,
): Promise<{ measured: Summary; baseline: Summary }> {
  for (let i = 0; i < warmup; i++) {
    await measured();
    await baseline();
  }
  const measuredTimes: number[] = [];
  const baselineTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      measuredTimes.push(await timed(measured));
      baselineTimes.push(await timed(baseline));
    } else {
      baselineTimes.push(await timed(baseline));
      measuredTimes.push(await timed(measured));
    }
  }
  return { measured: summarize(measuredTimes), baseline: summarize(baselineTimes) };
}

/** The head of a Markdown table of summaries, one measurement a row. */
export const SUMMARY_TABLE_HEAD = ['| measurement | p50 | p95 | min | max |', '|---|---|---|---|---|'];

/** One row of that table, each figure printed by `format`; `withP95: false` leaves p95 blank. */
export const summaryRow = (
  what: string,
  s: Summary,
  format: (value: number) => string,
  { withP95 = true } = {},
): string =>
  `| ${what} | ${format(s.p50)} |${withP95 ? ` ${format(s.p95)} ` : ' '}| ${format(s.min)} | ${format(s.max)} |`;
