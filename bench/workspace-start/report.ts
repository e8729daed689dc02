// The figures of one runtime as a Markdown table, each phase against the existing-workspace floor of
// the same run, with the load average when the phase ended; then the goals, met or not.
import { loadAverage } from '../support/format.js';
import { summarize } from '../support/stats.js';
import type { Summary } from '../support/stats.js';

export interface Row {
  what: string;
  summary: Summary;
  /** The 1, 5 and 15 minute load averages when the phase ended. */
  load: string;
  note?: string;
}

/** A phase's row, its load average taken now. */
export const row = (what: string, samples: readonly number[], note?: string): Row => ({
  what,
  summary: summarize(samples),
  load: loadAverage(),
  ...(note === undefined ? {} : { note }),
});

const ms = (value: number): string =>
  Number.isNaN(value) ? '–' : `${value.toFixed(value < 100 ? 1 : 0)} ms`;
const times = (value: number, floor: number): string =>
  Number.isNaN(value) || Number.isNaN(floor) ? '–' : `${(value / floor).toFixed(2)}×`;

export function printTable(label: string, rows: readonly Row[], floor: Summary | undefined): void {
  console.log(`\n### ${label}\n`);
  console.log(
    '| POST /v1/tasks → `init` | n | p50 | p95 | p99 | p50 / existing | p95 / existing | load average after | |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { what, summary: s, load, note } of rows) {
    console.log(
      `| ${what} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${times(s.p50, floor?.p50 ?? Number.NaN)} | ${times(s.p95, floor?.p95 ?? Number.NaN)} | ${load} | ${note ?? ''} |`,
    );
  }
}

/**
 * The goals for a claim: p50 ≤ 1.2× the existing workspace's, and ≤ 150 ms (real node) or
 * ≤ floor + 50 ms (embedded). The floor is the existing workspace's tasks timed in the claim rounds
 * (the same settled node and pause before each); the back-to-back floor's ratio is printed beside it.
 */
export function printGoals(
  claim: Summary,
  floor: Summary,
  kind: 'embedded' | 'real-node',
  backToBack: Summary | undefined,
): void {
  const verdict = (met: boolean): string => (met ? 'met' : 'not met');
  const ratio = claim.p50 / floor.p50;
  console.log(
    `- claim p50 ≤ 1.2× existing (in the same rounds): ${ratio.toFixed(2)}× — ${verdict(ratio <= 1.2)}`,
  );
  if (backToBack !== undefined)
    console.log(`  (against the back-to-back existing phase: ${(claim.p50 / backToBack.p50).toFixed(2)}×)`);
  if (kind === 'embedded') {
    const over = claim.p50 - floor.p50;
    console.log(`- claim p50 ≤ existing + 50 ms: +${over.toFixed(1)} ms — ${verdict(over <= 50)}`);
  } else {
    console.log(`- claim p50 ≤ 150 ms on the real node: ${ms(claim.p50)} — ${verdict(claim.p50 <= 150)}`);
  }
}
