// The table bench:api-workers prints (docs/benchmarks.md, "API workers"): medians per setting and,
// for 2 workers against 1, the median of the ratios taken within each round.
import { loadAverage } from '../support/format.js';
import { summarize } from '../support/stats.js';

export interface Measurement {
  /** AGENTRY_API_WORKERS as set (1, 2, auto). */
  setting: string;
  /** The processes that served. */
  workers: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  /** CPUs the process tree used on average over the load (starved when far below the workers). */
  cpusUsed: number;
}

const median = (values: readonly number[]): number => summarize(values).p50;

function row(setting: string, runs: readonly Measurement[]): string {
  const pick = (field: keyof Omit<Measurement, 'setting'>): number => median(runs.map((run) => run[field]));
  return [
    `| ${setting} (${String(pick('workers'))})`,
    `${pick('requestsPerSecond').toFixed(0)}/s`,
    `${pick('p50Ms').toFixed(0)} ms`,
    `${pick('p99Ms').toFixed(0)} ms`,
    `${pick('cpuUsPerRequest').toFixed(0)} µs`,
    `${pick('cpusUsed').toFixed(2)} |`,
  ].join(' | ');
}

/** Within each round, `field` of 2 workers over 1; the median over rounds. */
function ratioOfTwoToOne(
  rounds: readonly Measurement[][],
  field: 'requestsPerSecond' | 'p99Ms' | 'cpuUsPerRequest',
): string {
  const ratios = rounds.flatMap((round) => {
    const one = round.find((run) => run.setting === '1');
    const two = round.find((run) => run.setting === '2');
    return one === undefined || two === undefined ? [] : [two[field] / one[field]];
  });
  return ratios.length === 0 ? 'n/a' : `${median(ratios).toFixed(2)}×`;
}

export function printReport(
  rounds: readonly Measurement[][],
  settings: readonly string[],
  context: { connections: number; seconds: number; loadBefore: string },
): void {
  const runs = rounds.flat();
  console.log(
    `GET /v1/tasks/:id, ${String(context.connections)} connections, ${String(context.seconds)} s per run, ${String(rounds.length)} round(s); medians`,
  );
  console.log('| AGENTRY_API_WORKERS (processes) | req/s | p50 | p99 | CPU/request | CPUs used |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const setting of settings)
    console.log(
      row(
        setting,
        runs.filter((run) => run.setting === setting),
      ),
    );
  console.log('');
  console.log(
    `2 workers / 1: req/s ${ratioOfTwoToOne(rounds, 'requestsPerSecond')}, p99 ${ratioOfTwoToOne(rounds, 'p99Ms')}, CPU/request ${ratioOfTwoToOne(rounds, 'cpuUsPerRequest')}`,
  );
  console.log(`load average before: ${context.loadBefore}; after: ${loadAverage()}`);
}
