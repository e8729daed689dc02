import type { Registry } from 'prom-client';
import { ContextLakeType } from '../../../crds/context-lake/types.js';
import type { ContextLake } from '../../../crds/context-lake/types.js';
import type { InstallationKey } from '../../../platform/installation-key.js';
import type { SqsNotificationQueues } from '../../../platform/lake-notifications/queues.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import type { Controller, ControllerManager } from '../../controller/index.js';
import { BatchHandler } from './batch-handler.js';
import { NotificationMetrics } from './notification-metrics.js';
import { LakeNotificationsReconciler } from './reconciler.js';

export interface LakeNotificationsOptions {
  store: ResourceStore;
  logger: Logger;
  registry: Registry;
  /** The organizations' queues (platform/lake-notifications/queues.ts `notificationQueuesFromConfig`). */
  queues: SqsNotificationQueues;
  /** Gives the lake servers' tokens for refresh requests. */
  installationKey: InstallationKey;
  /** A batch whose status write or refresh failed is received again after this long. Default 30 s. */
  retryDelayMs?: number;
  /** First back-off after a failed receive (doubling to 30 s). Default 1 s. */
  pollErrorDelayMs?: number;
  now?: () => Date;
}

export interface LakeNotifications {
  controller: Controller<ContextLake>;
  /** The controller's stop aborts the loops; this also waits for the batches they hold. */
  stopPollers(): Promise<void>;
}

/**
 * Adds the `lake-notifications` controller (docs/architecture.md#the-context-lake): for each ContextLake with a dataset whose
 * `notifications` is true, it ensures the organization's SQS queue, long-polls it, counts the bucket
 * events per dataset in the lake's status and asks a running lake to refresh them. Its loops run
 * only while the controller runs, so only on the leader; before `manager.start` only.
 */
export function addLakeNotificationsController(
  manager: ControllerManager,
  options: LakeNotificationsOptions,
): LakeNotifications {
  const now = options.now ?? (() => new Date());
  const logger = options.logger.child({ controller: 'lake-notifications' });
  // Read at each scrape, after `reconciler` exists.
  const metrics = new NotificationMetrics(options.registry, (): number => reconciler.pollerCount);
  const batches = new BatchHandler({
    store: options.store,
    caches: manager.caches,
    queues: options.queues,
    installationKey: options.installationKey,
    metrics,
    logger,
    retryDelayMs: options.retryDelayMs ?? 30_000,
    now,
  });
  const reconciler = new LakeNotificationsReconciler({
    store: options.store,
    caches: manager.caches,
    queues: options.queues,
    batches,
    metrics,
    logger,
    now,
    ...(options.pollErrorDelayMs === undefined ? {} : { pollErrorDelayMs: options.pollErrorDelayMs }),
  });
  const controller = manager.add({
    name: 'lake-notifications',
    for: ContextLakeType,
    reconciler,
    workers: 2,
  });
  reconciler.wake = (request) => {
    controller.enqueue(request);
  };
  return { controller, stopPollers: () => reconciler.stopAll() };
}
