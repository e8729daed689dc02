import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { LakeQueryMetrics } from '../../operator/context-lake/query-metrics.js';

async function valueOf(registry: Registry, name: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value;
}

describe('LakeQueryMetrics', () => {
  it('sums the query counts of the lakes as each last reported them, dropping a lake that stopped', async () => {
    const registry = new Registry();
    const metrics = new LakeQueryMetrics(registry);
    metrics.observe('org-a', { running: 2, queued: 3, refused: 1 });
    metrics.observe('org-b', { running: 1, queued: 0, refused: 4 });
    metrics.observe('org-a', { running: 1, queued: 0, refused: 1 });
    expect(await valueOf(registry, 'agentry_lake_queries_running')).toBe(2);
    expect(await valueOf(registry, 'agentry_lake_queries_queued')).toBe(0);
    expect(await valueOf(registry, 'agentry_lake_queries_refused')).toBe(5);
    metrics.observe('org-b', undefined);
    expect(await valueOf(registry, 'agentry_lake_queries_refused')).toBe(1);
  });
});
