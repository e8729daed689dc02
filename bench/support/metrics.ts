// Reading the operator's Prometheus metrics in process: what the controllers did during a phase.
import type { MetricValue, Registry } from 'prom-client';

interface Selection {
  /** Only samples of this name: a histogram's _count or _sum. */
  sample?: string;
  /** Only samples with these label values. */
  where?: Record<string, string>;
}

const selected = (value: MetricValue<string>, { sample, where = {} }: Selection): boolean => {
  // A histogram's values carry their series name (_count, _sum, _bucket) beside the labels.
  const name = 'metricName' in value ? value.metricName : undefined;
  if (sample !== undefined && name !== sample) return false;
  return Object.entries(where).every(([k, v]) => value.labels[k] === v);
};

/** Sums of `metric`'s selected samples by the value of `label`. */
export async function sumsByLabel(
  registry: Registry,
  metric: string,
  label: string,
  selection: Selection = {},
): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const values = (await registry.getSingleMetric(metric)?.get())?.values ?? [];
  for (const value of values) {
    const key = value.labels[label];
    if (typeof key !== 'string' || !selected(value, selection)) continue;
    sums.set(key, (sums.get(key) ?? 0) + value.value);
  }
  return sums;
}

/** The sum of a map's values. */
export const total = (sums: ReadonlyMap<string, number>): number =>
  [...sums.values()].reduce((a, b) => a + b, 0);
