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

/**
 * The registry's metric named `name`, if there is one of the expected class: several apps or
 * managers (tests) may share a registry, and each metric is made once.
 */
export function registeredMetric<M>(
  registry: Registry,
  name: string,
  kind: abstract new (...args: never[]) => M,
): M | undefined {
  const found = registry.getSingleMetric(name);
  if (found === undefined) return undefined;
  if (found instanceof kind) return found;
  throw new Error(`metric ${name} is already registered with another type`);
}
