import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process (or per test server), with Node's default metrics under `agentry_`. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'agentry_' });
  return registry;
}
