import {
  CONTEXT_LAKE_NAME,
  CONTEXT_LAKE_SECRET_NAME,
  ContextLakeType,
  MANAGED_BY_AGENTRY_SELECTOR,
  SecretType,
} from '../../crds/index.js';
import type { ContextLake } from '../../crds/index.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import { withNothingToClose } from '../controller/index.js';
import type { AddController, ControllerDeps, ReconcilerControllerDeps } from '../controller/index.js';
import { workloadOwnedTypes } from '../runtimes/owned-types.js';
import { BatchHandler } from './notifications/batch-handler.js';
import { NotificationMetrics } from './notifications/notification-metrics.js';
import { LakeNotificationsReconciler } from './notifications/reconciler.js';
import { LakeQueryMetrics } from './query-metrics.js';
import { ContextLakeReconciler } from './reconciler.js';
import type { ContextLakeReconcilerOptions } from './reconciler.js';

export type ContextLakeControllerDeps = ReconcilerControllerDeps<
  ContextLakeReconcilerOptions,
  'caches' | 'queryMetrics'
>;

/**
 * The `contextlake` controller, woken by its lakes, their workloads' objects and their credentials
 * Secret. Default 2 workers.
 */
export const addContextLakeController: AddController<ContextLakeControllerDeps, ContextLake> = (
  manager,
  deps,
) => {
  return withNothingToClose(
    manager.add({
      name: 'contextlake',
      for: ContextLakeType,
      owns: workloadOwnedTypes(deps.runtimes),
      // The runtimes label all they make (workloadLabels): no cluster-wide Pods, Secrets, PVCs.
      ownedSelector: MANAGED_BY_AGENTRY_SELECTOR,
      // The `${secrets:...}` values: a changed credential is pushed to the running lake.
      watches: [
        {
          type: SecretType,
          // The API writes the credentials Secret with Agentry's label, as the runtimes do theirs.
          labelSelector: MANAGED_BY_AGENTRY_SELECTOR,
          map: (secret) =>
            secret.metadata.name === CONTEXT_LAKE_SECRET_NAME
              ? [{ namespace: secret.metadata.namespace, name: CONTEXT_LAKE_NAME }]
              : [],
        },
      ],
      reconciler: new ContextLakeReconciler({
        store: deps.store,
        caches: manager.caches,
        events: deps.events,
        logger: deps.logger.child({ controller: 'contextlake' }),
        runtimes: deps.runtimes,
        defaultRuntime: deps.defaultRuntime,
        installationKey: deps.installationKey,
        busyPollMs: deps.busyPollMs,
        runningPollMs: deps.runningPollMs,
        queryMetrics: new LakeQueryMetrics(deps.registry),
      }),
      workers: deps.workers ?? 2,
    }),
  );
};

export interface LakeNotificationsControllerDeps extends ControllerDeps {
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

/**
 * The `lake-notifications` controller (docs/architecture.md#the-context-lake): for each ContextLake
 * with a dataset whose `notifications` is true, it ensures the organization's SQS queue, long-polls
 * it, counts the bucket events per dataset in the lake's status and asks a running lake to refresh
 * them. Its loops run only while the controller runs, so only on the leader; `afterStop` waits for
 * the batches they hold.
 */
export const addLakeNotificationsController: AddController<LakeNotificationsControllerDeps, ContextLake> = (
  manager,
  deps,
) => {
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger.child({ controller: 'lake-notifications' });
  // Read at each scrape, after `reconciler` exists.
  const metrics = new NotificationMetrics(deps.registry, (): number => reconciler.pollerCount);
  const batches = new BatchHandler({
    store: deps.store,
    caches: manager.caches,
    queues: deps.queues,
    installationKey: deps.installationKey,
    metrics,
    logger,
    retryDelayMs: deps.retryDelayMs ?? 30_000,
    now,
  });
  const reconciler = new LakeNotificationsReconciler({
    store: deps.store,
    caches: manager.caches,
    queues: deps.queues,
    batches,
    metrics,
    logger,
    now,
    ...(deps.pollErrorDelayMs === undefined ? {} : { pollErrorDelayMs: deps.pollErrorDelayMs }),
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
  return { controller, afterStop: () => reconciler.stopAll() };
};
