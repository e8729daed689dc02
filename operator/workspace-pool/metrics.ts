import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { registeredMetric } from '../../platform/metrics.js';

/** A pool's label value: `<namespace>/<name>` (bounded by the pools that exist). */
export const poolLabel = (namespace: string | undefined, name: string): string =>
  `${namespace ?? ''}/${name}`;

/** Warm pool metrics (docs/workspace-pools.md#observability). */
export class WorkspacePoolMetrics {
  /** Unclaimed members by state `ready` / `provisioning`. */
  readonly members: Gauge<'pool' | 'state'>;
  /** Members the pool made. */
  readonly created: Counter<'pool'>;

  /** Several managers (tests) may share a registry: each metric is made once. */
  constructor(registry: Registry) {
    const registers = [registry];
    this.members =
      registeredMetric(registry, 'agentry_workspace_pool_members', Gauge) ??
      new Gauge({
        name: 'agentry_workspace_pool_members',
        help: 'Unclaimed members of a warm pool, by state (ready, provisioning).',
        labelNames: ['pool', 'state'],
        registers,
      });
    this.created =
      registeredMetric(registry, 'agentry_workspace_pool_created_total', Counter) ??
      new Counter({
        name: 'agentry_workspace_pool_created_total',
        help: 'Members a warm pool made (to fill it, and to replace claimed or deleted ones).',
        labelNames: ['pool'],
        registers,
      });
  }

  record(pool: string, ready: number, provisioning: number): void {
    this.members.labels(pool, 'ready').set(ready);
    this.members.labels(pool, 'provisioning').set(provisioning);
  }

  /** A deleted pool's series go with it. */
  forget(pool: string): void {
    this.members.remove(pool, 'ready');
    this.members.remove(pool, 'provisioning');
    this.created.remove(pool);
  }
}
