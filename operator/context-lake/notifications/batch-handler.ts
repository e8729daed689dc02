import { ContextLakeType } from '../../../crds/context-lake/types.js';
import type { ContextLake } from '../../../crds/context-lake/types.js';
import type { InstallationKey } from '../../../platform/installation-key.js';
import { LakeClient } from '../../../platform/lake-client.js';
import type { SqsNotificationQueues, QueueMessage } from '../../../platform/lake-notifications/queues.js';
import { decodeS3Message, notificationTargets } from '../../../platform/lake-notifications/s3-events.js';
import type { S3ObjectEvent } from '../../../platform/lake-notifications/s3-events.js';
import type { RefreshRequest } from '../../../platform/lake-protocol.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import type { Caches } from '../../controller/caches.js';
import { concernedDatasets, refreshEndpointOf, statusWithEventCounts, tallyEvents } from './lake-counters.js';
import type { NotificationMetrics } from './notification-metrics.js';
import { refreshRequestOf } from './object-changes.js';
import { updateStatus } from '../../../platform/store/status-writer.js';

export interface BatchHandlerOptions {
  store: ResourceStore;
  caches: Caches;
  queues: SqsNotificationQueues;
  /** Gives the lake server's token. */
  installationKey: InstallationKey;
  metrics: NotificationMetrics;
  logger: Logger;
  /** A batch whose status write or refresh failed comes back after this long (not the 120 s timeout). */
  retryDelayMs: number;
  now: () => Date;
}

/** The lake whose queue a batch came from. */
export interface LakeKey {
  namespace: string;
  name: string;
}

/** A message with object events. */
interface Carrier {
  message: QueueMessage;
  events: S3ObjectEvent[];
}

/**
 * Handles one received batch, at least once: events are counted in the ContextLake's status and a
 * running lake is asked to refresh the datasets they concern, and only then are their messages
 * deleted. When the refresh or the status write fails, they stay and come back; in the rare case
 * where the write succeeded but the delete did not, they are counted twice (documented). Test
 * events, malformed bodies and events that concern no dataset are deleted at once.
 */
export class BatchHandler {
  constructor(private readonly options: BatchHandlerOptions) {}

  async handle(key: LakeKey, queueUrl: string, messages: readonly QueueMessage[]): Promise<void> {
    const { carriers, settled } = this.decode(key, messages);
    const lake = carriers.length === 0 ? undefined : await this.readLake(key);
    if (lake === 'unavailable') {
      await this.acknowledge(key, queueUrl, settled);
      await this.retry(key, queueUrl, carriers);
      return;
    }
    // A lake that is gone has no datasets: its events concern nothing.
    const targets = lake === undefined ? [] : notificationTargets(lake.spec.config.datasets);
    const tally = tallyEvents(
      carriers.flatMap((carrier) => carrier.events),
      targets,
    );
    this.options.metrics.eventsMatched.inc(tally.matched);
    this.options.metrics.eventsUnmatched.inc(tally.unmatched);
    const matching: Carrier[] = [];
    const unmatched: Carrier[] = [];
    for (const carrier of carriers) {
      const concerns = carrier.events.some((event) => concernedDatasets(event, targets).length > 0);
      (concerns ? matching : unmatched).push(carrier);
    }
    await this.acknowledge(key, queueUrl, [...settled, ...unmatched.map((carrier) => carrier.message)]);
    if (lake === undefined || matching.length === 0) return;
    const refresh = refreshRequestOf(
      matching.flatMap((carrier) => carrier.events),
      targets,
    );
    if (await this.countAndRefresh(key, lake, tally.datasets, refresh))
      await this.acknowledge(
        key,
        queueUrl,
        matching.map((carrier) => carrier.message),
      );
    else await this.retry(key, queueUrl, matching);
  }

  /** The lake as stored now (its datasets may have changed since the poll began). */
  private async readLake(key: LakeKey): Promise<ContextLake | undefined | 'unavailable'> {
    try {
      return await this.options.store.get(ContextLakeType, key.namespace, key.name);
    } catch (err) {
      this.options.logger.warn(
        { err, namespace: key.namespace },
        'cannot read the context lake; its events will come back',
      );
      return 'unavailable';
    }
  }

  /** Splits a batch: messages with object events, and those to delete at once (test, malformed). */
  private decode(
    key: LakeKey,
    messages: readonly QueueMessage[],
  ): { carriers: Carrier[]; settled: QueueMessage[] } {
    const carriers: Carrier[] = [];
    const settled: QueueMessage[] = [];
    for (const message of messages) {
      const decoded = decodeS3Message(message.body);
      switch (decoded.kind) {
        case 'events':
          this.options.metrics.eventsReceived.inc(decoded.events.length);
          carriers.push({ message, events: decoded.events });
          break;
        case 'test':
          settled.push(message);
          break;
        case 'malformed':
          this.options.metrics.malformedMessages.inc();
          this.options.logger.warn(
            { namespace: key.namespace, messageId: message.messageId, reason: decoded.reason },
            'deleting a notification message that is not an S3 event',
          );
          settled.push(message);
          break;
      }
    }
    return { carriers, settled };
  }

  /**
   * Asks a running lake to refresh (once, every dataset of the batch, with the object changes of
   * its events), then writes the counters. Whether both succeeded: only then may the messages go.
   */
  private async countAndRefresh(
    key: LakeKey,
    lake: ContextLake,
    datasets: ReadonlyMap<string, { count: number; lastEventAt: Date }>,
    refresh: RefreshRequest,
  ): Promise<boolean> {
    const { logger, metrics } = this.options;
    const names = refresh.datasets;
    let refreshedAt: Date | undefined;
    const endpoint = refreshEndpointOf(lake);
    if (endpoint !== undefined) {
      try {
        const token = this.options.installationKey.runnerToken(lake);
        await new LakeClient({ endpoint, token }).refresh(refresh.datasets, { changes: refresh.changes });
        refreshedAt = this.options.now();
        metrics.refreshes.labels('accepted').inc();
      } catch (err) {
        metrics.refreshes.labels('failed').inc();
        logger.warn(
          { err, namespace: key.namespace, datasets: names },
          'the lake did not accept a refresh; the events will come back',
        );
        return false;
      }
    }
    try {
      await updateStatus(
        this.options.store,
        ContextLakeType,
        key,
        (current) => statusWithEventCounts(current.status, datasets, refreshedAt),
        { caches: this.options.caches },
      );
    } catch (err) {
      logger.warn(
        { err, namespace: key.namespace, datasets: names },
        'cannot count bucket events; they will come back',
      );
      return false;
    }
    // Debug: a busy bucket makes a batch every few seconds; the metrics tell the rate.
    logger.debug(
      { namespace: key.namespace, datasets: names, refreshed: refreshedAt !== undefined },
      'bucket events counted',
    );
    return true;
  }

  private async acknowledge(
    key: LakeKey,
    queueUrl: string,
    messages: readonly QueueMessage[],
  ): Promise<void> {
    if (messages.length === 0) return;
    try {
      const failed = await this.options.queues.acknowledge(queueUrl, messages);
      if (failed.length > 0)
        this.options.logger.warn(
          { namespace: key.namespace, messages: failed.length },
          'SQS did not delete handled messages; they will be handled again',
        );
    } catch (err) {
      this.options.logger.warn(
        { err, namespace: key.namespace },
        'cannot delete handled messages; they will be handled again',
      );
    }
  }

  private async retry(key: LakeKey, queueUrl: string, carriers: readonly Carrier[]): Promise<void> {
    this.options.metrics.batchesRetried.inc();
    try {
      await this.options.queues.release(
        queueUrl,
        carriers.map((carrier) => carrier.message),
        this.options.retryDelayMs / 1000,
      );
    } catch (err) {
      // The queue's visibility timeout brings them back anyway, only later.
      this.options.logger.debug(
        { err, namespace: key.namespace },
        'cannot shorten the visibility of messages to retry',
      );
    }
  }
}
