// What the delivery controller did in a phase: its reconciles and outcomes (from its metrics), its
// warnings, and the status writes it made (from the counting store).
import { ms } from '../support/format.js';
import { sumsByLabel, total } from '../support/metrics.js';
import { env, logs } from './environment.js';

export interface Metrics {
  reconciles: Map<string, number>;
  outcomes: Map<string, number>;
  /** Seconds spent in reconciles, and their count, over all results. */
  seconds: number;
  count: number;
}

export const EMPTY_METRICS: Metrics = { reconciles: new Map(), outcomes: new Map(), seconds: 0, count: 0 };

export async function readMetrics(): Promise<Metrics> {
  const registry = env.registry;
  if (registry === undefined) return { reconciles: new Map(), outcomes: new Map(), seconds: 0, count: 0 };
  const metric = 'agentry_reconcile_duration_seconds';
  const reconciles = await sumsByLabel(registry, metric, 'result', { sample: `${metric}_count` });
  const sums = await sumsByLabel(registry, metric, 'result', { sample: `${metric}_sum` });
  return {
    reconciles,
    outcomes: await sumsByLabel(registry, 'agentry_webhook_deliveries_total', 'outcome'),
    seconds: total(sums),
    count: total(reconciles),
  };
}

const diff = (after: Map<string, number>, before: Map<string, number>): string =>
  [...after]
    .map(([key, value]) => [key, value - (before.get(key) ?? 0)] as const)
    .filter(([, value]) => value !== 0)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ') || 'none';

export function reportController(before: Metrics, after: Metrics): void {
  const count = after.count - before.count;
  const mean = count === 0 ? Number.NaN : ((after.seconds - before.seconds) / count) * 1000;
  console.log(
    `  reconciles: ${diff(after.reconciles, before.reconciles)} (mean ${ms(mean)}); ` +
      `outcomes: ${diff(after.outcomes, before.outcomes)}; controller warnings: ${logs.take()}`,
  );
}

export function reportStoreWrites(deliveries: number): void {
  const counting = env.counting;
  if (counting === undefined) return;
  const per = (kind: string): string =>
    `${kind} ${counting.writes.get(kind) ?? 0} (${((counting.writes.get(kind) ?? 0) / deliveries).toFixed(2)}/delivery, ` +
    `${counting.conflicts.get(kind) ?? 0} conflicts)`;
  console.log(`  the controller's status writes: ${per('Task')}, ${per('Webhook')}`);
}
