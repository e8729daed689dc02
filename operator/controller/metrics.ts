import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { registeredMetric } from '../../platform/metrics.js';
import type { QueueMetrics } from './queue.js';

/** How a reconcile ended: the `result` label. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'terminal';

/**
 * The controller runtime's metrics in one registry. Labels are bounded: the controller's name and
 * the outcome, never an object's key or name. Several managers (tests) may share a registry: each
 * metric is created once and reused.
 */
export class ControllerMetrics {
  readonly depth: Gauge<'controller'>;
  readonly adds: Counter<'controller'>;
  readonly duration: Histogram<'controller' | 'result'>;
  readonly errors: Counter<'controller'>;
  readonly leader: Gauge<'lease'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.depth =
      registeredMetric(registry, 'agentry_workqueue_depth', Gauge) ??
      new Gauge({
        name: 'agentry_workqueue_depth',
        help: 'Keys waiting in a controller work queue.',
        labelNames: ['controller'],
        registers,
      });
    this.adds =
      registeredMetric(registry, 'agentry_workqueue_adds_total', Counter) ??
      new Counter({
        name: 'agentry_workqueue_adds_total',
        help: 'Keys added to a controller work queue (not counting adds of a key already waiting).',
        labelNames: ['controller'],
        registers,
      });
    this.duration =
      registeredMetric(registry, 'agentry_reconcile_duration_seconds', Histogram) ??
      new Histogram({
        name: 'agentry_reconcile_duration_seconds',
        help: 'Time one reconcile took, by outcome (success, requeue, error, terminal).',
        labelNames: ['controller', 'result'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers,
      });
    this.errors =
      registeredMetric(registry, 'agentry_reconcile_errors_total', Counter) ??
      new Counter({
        name: 'agentry_reconcile_errors_total',
        help: 'Reconciles that failed (retried with back-off, or terminal).',
        labelNames: ['controller'],
        registers,
      });
    this.leader =
      registeredMetric(registry, 'agentry_leader_status', Gauge) ??
      new Gauge({
        name: 'agentry_leader_status',
        help: '1 while this process holds the leader election lease, else 0.',
        labelNames: ['lease'],
        registers,
      });
  }

  /** The work queue's view of the metrics, labelled with one controller's name. */
  queue(controller: string): QueueMetrics {
    const depth = this.depth.labels(controller);
    const adds = this.adds.labels(controller);
    depth.set(0);
    return {
      depth: (length) => {
        depth.set(length);
      },
      added: () => {
        adds.inc();
      },
    };
  }
}
