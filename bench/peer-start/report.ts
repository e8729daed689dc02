// The run's table: each phase's medians over the rounds, and per-round ratios against the peer and
// against bare Pods (medians of the ratios, each taken within one round).
import { loadAverage, ratio } from '../support/format.js';
import { percentile } from '../support/stats.js';
import { seconds } from '../reconcile-throughput/phase.js';
import type { PhaseResult } from '../reconcile-throughput/phase.js';
import type { ControllerPhase } from './controller-phase.js';

export interface Round {
  bare: PhaseResult;
  sandbox: ControllerPhase;
  agentry: ControllerPhase;
}

const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

const medianOf = (values: readonly number[], format: (value: number) => string): string =>
  values.every(Number.isFinite) ? format(median(values)) : '—';

const times = (rows: readonly PhaseResult[]): string =>
  [
    medianOf(
      rows.map((r) => r.totalMs),
      seconds,
    ),
    medianOf(
      rows.map((r) => r.p50Ms),
      seconds,
    ),
    medianOf(
      rows.map((r) => r.p95Ms),
      seconds,
    ),
  ].join(' | ');

const usage = (rows: readonly ControllerPhase[]): string =>
  [
    medianOf(
      rows.map((r) => r.cpuSeconds),
      (v) => v.toFixed(1),
    ),
    medianOf(
      rows.map((r) => r.rssMiB),
      (v) => v.toFixed(0),
    ),
    medianOf(
      rows.map((r) => r.peakRssMiB),
      (v) => v.toFixed(0),
    ),
  ].join(' | ');

/** The median over rounds of `of(round)` as a multiple. */
const ratioOf = (rounds: readonly Round[], of: (round: Round) => [number, number]): string =>
  `${median(rounds.map((round) => of(round)[0] / of(round)[1])).toFixed(2)}x`;

export function printReport(n: number, rounds: readonly Round[], loadBefore: string): void {
  const bare = rounds.map((r) => r.bare);
  const sandbox = rounds.map((r) => r.sandbox);
  const agentry = rounds.map((r) => r.agentry);
  console.log(
    `\nN = ${n}, ${rounds.length} round(s), medians; load average ${loadBefore} → ${loadAverage()}`,
  );
  console.log(
    '| phase | all ready s | p50 ready s | p95 ready s | controller CPU s | RSS MiB | peak RSS MiB |',
  );
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| bare PVC + Pod | ${times(bare)} | — | — | — |`);
  console.log(`| agent-sandbox v0.5.6 Sandboxes | ${times(sandbox)} | ${usage(sandbox)} |`);
  console.log(`| Agentry AgentComputers | ${times(agentry)} | ${usage(agentry)} |`);
  console.log(
    `Agentry / agent-sandbox: wall ${ratioOf(rounds, (r) => [r.agentry.totalMs, r.sandbox.totalMs])}, ` +
      `p95 ${ratioOf(rounds, (r) => [r.agentry.p95Ms, r.sandbox.p95Ms])}, ` +
      `CPU ${ratioOf(rounds, (r) => [r.agentry.cpuSeconds, r.sandbox.cpuSeconds])}, ` +
      `peak RSS ${ratioOf(rounds, (r) => [r.agentry.peakRssMiB, r.sandbox.peakRssMiB])}`,
  );
  console.log(
    `vs bare: Agentry ${ratioOf(rounds, (r) => [r.agentry.totalMs, r.bare.totalMs])}, ` +
      `agent-sandbox ${ratioOf(rounds, (r) => [r.sandbox.totalMs, r.bare.totalMs])}`,
  );
  for (const [i, r] of rounds.entries()) {
    console.log(
      `round ${i + 1}: bare ${seconds(r.bare.totalMs)} s, agent-sandbox ${seconds(r.sandbox.totalMs)} s ` +
        `(${r.sandbox.cpuSeconds} CPU s), Agentry ${seconds(r.agentry.totalMs)} s (${r.agentry.cpuSeconds} CPU s); ` +
        `Agentry/agent-sandbox ${ratio(r.agentry.totalMs, r.sandbox.totalMs)}`,
    );
  }
}
