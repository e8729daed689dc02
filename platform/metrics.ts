import { Registry, collectDefaultMetrics } from 'prom-client';

/** Node's default metrics (CPU, memory, event loop) under `agentry_`, added to `registry`. */
export function withDefaultMetrics<R extends Registry>(registry: R): R {
  collectDefaultMetrics({ register: registry, prefix: 'agentry_' });
  return registry;
}

/** One registry per process (or per test server), with Node's default metrics under `agentry_`. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  return (options.defaultMetrics ?? true) ? withDefaultMetrics(registry) : registry;
}
