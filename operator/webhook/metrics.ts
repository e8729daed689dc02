import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { WebhookEventType } from '../../crds/index.js';

/**
 * What became of one outbox entry at one reconcile:
 * - success: the target answered 2xx; the entry is removed.
 * - failure: the attempt failed and another is scheduled.
 * - exhausted: the last scheduled attempt failed; the entry is removed.
 * - gone: the target answered 410; the webhook is disabled and the entry removed.
 * - dropped: the webhook no longer exists or is inactive; removed without an attempt.
 */
export type DeliveryOutcome = 'success' | 'failure' | 'exhausted' | 'gone' | 'dropped';

/** The result of one HTTP attempt, for the duration histogram. */
export type AttemptResult = 'success' | 'failure' | 'gone';

/**
 * Webhook delivery metrics (docs/architecture.md#observability). Labels are bounded: the event type and a small outcome
 * enum, never a webhook name, task id or URL.
 */
export class WebhookMetrics {
  readonly deliveries: Counter<'event' | 'outcome'>;
  readonly attemptDuration: Histogram<'result'>;
  readonly outboxDepth: Gauge;

  /** `depth` is read at each scrape: the entries pending across all tasks. */
  constructor(registry: Registry, depth: () => number) {
    const registers = [registry];
    this.deliveries = new Counter({
      name: 'agentry_webhook_deliveries_total',
      help: 'Webhook outbox entries handled, by event and outcome (success, failure, exhausted, gone, dropped).',
      labelNames: ['event', 'outcome'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'agentry_webhook_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt (target check, connection, answer).',
      labelNames: ['result'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
    this.outboxDepth = new Gauge({
      name: 'agentry_webhook_outbox_depth',
      help: 'Webhook deliveries pending in the outboxes of all tasks.',
      registers,
      collect() {
        this.set(depth());
      },
    });
  }

  count(event: WebhookEventType, outcome: DeliveryOutcome): void {
    this.deliveries.labels(event, outcome).inc();
  }
}
