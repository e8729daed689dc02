import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/**
 * S3 notification metrics (docs/architecture.md#observability). No organization or dataset labels: their number is
 * unbounded; logs carry the namespace.
 */
export class NotificationMetrics {
  /** Object events decoded from messages (received = matched + unmatched). */
  readonly eventsReceived: Counter;
  /** Events that concern at least one dataset with notifications. */
  readonly eventsMatched: Counter;
  /** Events of another bucket or key, or not changing data: deleted without effect. */
  readonly eventsUnmatched: Counter;
  /** Message bodies that are neither S3 events nor S3 test events: logged and deleted. */
  readonly malformedMessages: Counter;
  /** ReceiveMessage failures (the loop backs off and tries again). */
  readonly pollErrors: Counter;
  /** Refresh requests to running lakes, by result (accepted, failed). */
  readonly refreshes: Counter<'result'>;
  /** Batches left in the queue because their status write or refresh failed (they come back). */
  readonly batchesRetried: Counter;
  /** Organizations whose queue is being polled. */
  readonly pollers: Gauge;

  constructor(registry: Registry, pollerCount: () => number) {
    const registers = [registry];
    this.eventsReceived = new Counter({
      name: 'agentry_lake_s3_events_received_total',
      help: 'S3 object events received from the organizations’ notification queues.',
      registers,
    });
    this.eventsMatched = new Counter({
      name: 'agentry_lake_s3_events_matched_total',
      help: 'S3 object events that matched at least one dataset with notifications.',
      registers,
    });
    this.eventsUnmatched = new Counter({
      name: 'agentry_lake_s3_events_unmatched_total',
      help: 'S3 object events that matched no dataset (other bucket or key, or no data change).',
      registers,
    });
    this.malformedMessages = new Counter({
      name: 'agentry_lake_s3_malformed_messages_total',
      help: 'Notification queue messages that were not S3 events; deleted.',
      registers,
    });
    this.pollErrors = new Counter({
      name: 'agentry_lake_s3_poll_errors_total',
      help: 'Failed receives from the notification queues.',
      registers,
    });
    this.refreshes = new Counter({
      name: 'agentry_lake_s3_refreshes_total',
      help: 'Refresh requests sent to running lakes after bucket events, by result (accepted, failed).',
      labelNames: ['result'],
      registers,
    });
    this.batchesRetried = new Counter({
      name: 'agentry_lake_s3_batches_retried_total',
      help: 'Batches of events left in the queue (status write or refresh failed); SQS redelivers them.',
      registers,
    });
    this.pollers = new Gauge({
      name: 'agentry_lake_s3_pollers',
      help: 'Organizations whose notification queue is being long-polled.',
      registers,
      collect() {
        this.set(pollerCount());
      },
    });
  }
}
