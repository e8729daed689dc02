import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { registeredMetric } from '../../platform/metrics.js';

type QueryCounts = NonNullable<LakeStatus['queries']>;

/**
 * The lakes' query admission (lake/query-admission.ts) as operator metrics, summed over the lakes
 * as each last reported it (read with their status, every 30 s while running): no organization
 * label, their number is unbounded. A lake that stops or is deleted drops out of the sums.
 */
export class LakeQueryMetrics {
  private readonly lakes = new Map<string, QueryCounts>();

  constructor(registry: Registry) {
    const gauge = (name: string, help: string, pick: (counts: QueryCounts) => number): void => {
      if (registeredMetric(registry, name, Gauge) !== undefined) return;
      const sum = (): number => [...this.lakes.values()].reduce((total, counts) => total + pick(counts), 0);
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(sum());
        },
      });
    };
    gauge('agentry_lake_queries_running', 'SQL queries running in the lakes.', (counts) => counts.running);
    gauge(
      'agentry_lake_queries_queued',
      'SQL queries waiting in the lakes for a turn to run.',
      (counts) => counts.queued,
    );
    gauge(
      'agentry_lake_queries_refused',
      'SQL queries the running lakes refused as busy since each started.',
      (counts) => counts.refused,
    );
  }

  /** What a lake reported, or undefined when it did not answer (paused, gone). */
  observe(namespace: string, counts: QueryCounts | undefined): void {
    if (counts === undefined) this.lakes.delete(namespace);
    else this.lakes.set(namespace, counts);
  }
}
