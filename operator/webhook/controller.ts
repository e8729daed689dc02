import { OrganizationType, TaskType, WebhookType } from '../../crds/index.js';
import type { Task, Webhook } from '../../crds/index.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { HostLookup } from '../../platform/outbound-targets.js';
import { withNothingToClose } from '../controller/index.js';
import type { AddController, ControllerDeps } from '../controller/index.js';
import { DeliveryClient } from './delivery-client.js';
import { WebhookDeliveryReconciler } from './delivery-reconciler.js';
import { DEFAULT_RETRY_SCHEDULE_MS } from './retry-schedule.js';
import { SigningKeys, storeSignerLoader } from './signing-keys.js';
import { WebhookMetrics } from './metrics.js';

export interface WebhookDeliveryControllerDeps extends ControllerDeps {
  /** Where the signing keys' Secret lives. */
  controlNamespace: string;
  /** Builds share links in delivered task records. */
  installationKey: InstallationKey;
  /** Base URL clients reach the API at (no trailing slash, no /v1): task records' `url`. */
  publicUrl: string;
  /** Webhooks of every organization may reach private addresses and plain http. */
  allowPrivateTargets: boolean;
  /** Delays after each failed attempt; default: Standard Webhooks' example schedule. */
  retrySchedule?: number[];
  /** Parallel reconciles of tasks with deliveries due. Default 8. */
  workers?: number;
  /** Attempts in flight at once to one webhook, across all tasks. Default 4. */
  perWebhookConcurrency?: number;
  /** Without an answer for this long, an attempt fails. Default 15 s (docs/api.md#webhooks); shorter in tests. */
  attemptTimeoutMs?: number;
  /** Replaces DNS (tests). */
  lookup?: HostLookup;
  now?: () => Date;
}

/**
 * The `webhook-delivery` controller of tasks' outboxes: woken by every Task change (an outbox entry
 * is written with the transition) and by Webhook changes (a disabled or deleted webhook's pending
 * entries are dropped at once).
 */
export const addWebhookDeliveryController: AddController<WebhookDeliveryControllerDeps, Task> = (
  manager,
  deps,
) => {
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger.child({ controller: 'webhook-delivery' });
  // The organization's own allowPrivateWebhookTargets is read from this cache.
  manager.cache(OrganizationType);
  const metrics = new WebhookMetrics(deps.registry, () =>
    manager.caches.list(TaskType).reduce((sum, task) => sum + (task.status?.outbox?.length ?? 0), 0),
  );
  const publicUrl = deps.publicUrl.replace(/\/+$/, '');
  const reconciler = new WebhookDeliveryReconciler({
    store: deps.store,
    caches: manager.caches,
    logger,
    client: new DeliveryClient({
      now,
      ...(deps.attemptTimeoutMs === undefined ? {} : { timeoutMs: deps.attemptTimeoutMs }),
      ...(deps.lookup === undefined ? {} : { lookup: deps.lookup }),
    }),
    signingKeys: new SigningKeys(storeSignerLoader(deps.store, deps.controlNamespace), logger, { now }),
    metrics,
    presentation: {
      publicUrl,
      shareUrl: (shareId) => `${publicUrl}/v1/share/${deps.installationKey.shareToken(shareId)}`,
    },
    allowPrivateTargets: deps.allowPrivateTargets,
    retrySchedule: deps.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
    perWebhookConcurrency: deps.perWebhookConcurrency ?? 4,
    now,
  });
  const controller = manager.add({
    name: 'webhook-delivery',
    for: TaskType,
    watches: [
      {
        type: WebhookType,
        map: (webhook: Webhook) => {
          const { namespace, name } = webhook.metadata;
          // Only when it became unusable (the cache already holds the change): every delivery updates
          // a webhook's status, and waking all its tasks for each one would be a storm.
          const current = manager.caches.get(WebhookType, namespace, name);
          const usable =
            current?.metadata.deletionTimestamp === undefined && current?.status?.isActive !== false;
          if (current !== undefined && usable) return [];
          return manager.caches
            .list(TaskType, namespace)
            .filter((task) => task.status?.outbox?.some((entry) => entry.webhook === name))
            .map((task) => ({ namespace: task.metadata.namespace, name: task.metadata.name }));
        },
      },
    ],
    reconciler,
    workers: deps.workers ?? 8,
  });
  reconciler.onSlotFree = (request) => {
    controller.enqueue(request);
  };
  return withNothingToClose(controller);
};
