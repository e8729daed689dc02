import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../../crds/context-lake/types.js';
import { ContextLakeConditions } from '../../../crds/context-lake/conditions.js';
import type { ContextLake } from '../../../crds/context-lake/types.js';
import type { SqsNotificationQueues } from '../../../platform/lake-notifications/queues.js';
import { NotificationsUnavailableError } from '../../../platform/lake-notifications/types.js';
import type { NotificationQueue } from '../../../platform/lake-notifications/types.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import type { Caches } from '../../controller/caches.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../../controller/types.js';
import { findCondition } from '../../../crds/conditions.js';
import type { BatchHandler } from './batch-handler.js';
import { statusWithQueue, wantsNotifications } from './lake-counters.js';
import type { NotificationMetrics } from './notification-metrics.js';
import { QueuePoller } from './queue-poller.js';
import { updateStatus } from '../../../platform/store/status-writer.js';

export interface LakeNotificationsReconcilerOptions {
  store: ResourceStore;
  caches: Caches;
  queues: SqsNotificationQueues;
  batches: BatchHandler;
  metrics: NotificationMetrics;
  logger: Logger;
  now: () => Date;
  /** First back-off after a failed receive. */
  pollErrorDelayMs?: number;
}

const sameQueue = (a: NotificationQueue | undefined, b: NotificationQueue): boolean =>
  a?.queueUrl === b.queueUrl && a.queueArn === b.queueArn && a.region === b.region;

/**
 * Keeps one long-poll loop per organization whose ContextLake has a dataset with notifications:
 * ensures the queue (recording `status.notifications` and NotificationsReady), starts the loop, and
 * stops it when the lake no longer needs it or is gone. The loops live as long as the controller:
 * its signal (aborted when it stops, on shutdown or a lost lease) ends them, so only the leader
 * polls.
 */
export class LakeNotificationsReconciler implements Reconciler {
  /** Set once the controller exists: re-reconciles a lake whose queue vanished. */
  wake: (request: ReconcileRequest) => void = () => undefined;
  private readonly pollers = new Map<string, QueuePoller>();

  constructor(private readonly options: LakeNotificationsReconcilerOptions) {}

  get pollerCount(): number {
    return this.pollers.size;
  }

  async reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const namespace = request.namespace;
    if (namespace === undefined || request.name !== CONTEXT_LAKE_NAME) return undefined;
    const lake = this.options.caches.get(ContextLakeType, namespace, request.name);
    if (lake === undefined || !wantsNotifications(lake)) {
      await this.stopPoller(namespace);
      return undefined;
    }
    const running = this.livePoller(namespace);
    if (running !== undefined && this.recorded(lake, running.queue)) return undefined;
    const queue = await this.ensureQueue(lake, namespace);
    const written = await updateStatus(
      this.options.store,
      ContextLakeType,
      { namespace, name: request.name },
      (current) => statusWithQueue(current, { queue }, this.options.now()),
      { caches: this.options.caches },
    );
    // Gone meanwhile: its DELETED event will find nothing left to do.
    if (written === undefined) await this.stopPoller(namespace);
    else if (running === undefined || !sameQueue(running.queue, queue)) {
      await this.stopPoller(namespace);
      if (!signal.aborted) this.startPoller(namespace, queue, signal);
    }
    return undefined;
  }

  /** The organization's loop, unless it has ended (queue gone, controller stopping). */
  private livePoller(namespace: string): QueuePoller | undefined {
    const poller = this.pollers.get(namespace);
    return poller === undefined || poller.stopped ? undefined : poller;
  }

  /** Whether the lake's status already shows this queue, ready. */
  private recorded(lake: ContextLake, queue: NotificationQueue): boolean {
    const ready = findCondition(lake.status?.conditions, ContextLakeConditions.NotificationsReady);
    return ready?.status === 'True' && sameQueue(lake.status?.notifications, queue);
  }

  /** The queue, or a NotificationsReady False with the reason and an error (retried with back-off). */
  private async ensureQueue(lake: ContextLake, namespace: string): Promise<NotificationQueue> {
    try {
      return await this.options.queues.ensureQueue(namespace);
    } catch (err) {
      const message =
        err instanceof NotificationsUnavailableError
          ? err.message
          : 'the notification queue cannot be set up';
      await updateStatus(
        this.options.store,
        ContextLakeType,
        { namespace, name: lake.metadata.name },
        (current) => statusWithQueue(current, { error: message }, this.options.now()),
        { caches: this.options.caches },
      );
      throw new Error(`ensuring the notification queue of ${namespace}`, { cause: err });
    }
  }

  private startPoller(namespace: string, queue: NotificationQueue, signal: AbortSignal): void {
    const { queues, batches, metrics, logger } = this.options;
    const key = { namespace, name: CONTEXT_LAKE_NAME };
    const poller: QueuePoller = new QueuePoller({
      namespace,
      queue,
      signal,
      receive: (queueUrl, receiveSignal) => queues.receive(queueUrl, receiveSignal),
      handle: (messages) => batches.handle(key, queue.queueUrl, messages),
      onQueueMissing: () => {
        if (this.pollers.get(namespace) === poller) this.pollers.delete(namespace);
        this.wake(key);
      },
      metrics,
      logger,
      ...(this.options.pollErrorDelayMs === undefined ? {} : { errorDelayMs: this.options.pollErrorDelayMs }),
    });
    this.pollers.set(namespace, poller);
    void poller.done.finally(() => {
      if (this.pollers.get(namespace) === poller) this.pollers.delete(namespace);
    });
  }

  /** Ends every loop and waits for batches in hand to finish (operator shutdown). */
  async stopAll(): Promise<void> {
    const pollers = [...this.pollers.values()];
    this.pollers.clear();
    await Promise.all(pollers.map((poller) => poller.stop()));
  }

  private async stopPoller(namespace: string): Promise<void> {
    const poller = this.pollers.get(namespace);
    if (poller === undefined) return;
    this.pollers.delete(namespace);
    await poller.stop();
  }
}
