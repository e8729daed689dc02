import { TaskType, WebhookType } from '../../crds/index.js';
import type { Task, TaskStatus } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import { updateStatus } from '../../platform/store/status-writer.js';
import { mergeOutbox, webhookStatusAfter } from './outbox.js';
import type { EntryResult, WebhookAttempt } from './outbox.js';

/**
 * The status writes of webhook delivery, each a read-merge-write with a resourceVersion
 * precondition retried on Conflict: the Task reconciler adds outbox entries and writes the rest of
 * the Task's status meanwhile, and deliveries of other tasks update the same Webhook.
 */
export class OutboxWriter {
  /** Attempts waiting to be written on each webhook, and whether a write is under way. */
  private readonly webhookQueues = new Map<
    string,
    { pending: { attempts: readonly WebhookAttempt[]; done: () => void }[]; running: boolean }
  >();

  constructor(
    private readonly store: ResourceStore,
    private readonly caches: Caches,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the results into the Task's outbox, changing nothing else; returns the Task as written
   * (or as read, when nothing changed), undefined once it is gone.
   */
  writeOutbox(
    first: Task,
    results: ReadonlyMap<string, EntryResult>,
    gone: ReadonlySet<string>,
  ): Promise<Task | undefined> {
    const key = { namespace: first.metadata.namespace ?? '', name: first.metadata.name };
    return updateStatus(this.store, TaskType, key, (task) => withOutbox(task.status, results, gone), {
      caches: this.caches,
      read: first,
    });
  }

  /**
   * Records the attempts on each webhook's status; resolves once they are written. Writes to one
   * webhook are made one at a time, each carrying every attempt recorded meanwhile: deliveries of
   * many tasks to the same webhook would otherwise fight over its resourceVersion (measured: ~6
   * conflicts per write at 300 deliveries/s). Failures are logged: the outbox holds the truth.
   */
  async updateWebhooks(
    namespace: string,
    attempts: ReadonlyMap<string, readonly WebhookAttempt[]>,
    now: () => Date,
  ): Promise<void> {
    await Promise.all([...attempts].map(([name, list]) => this.recordOn(namespace, name, list, now)));
  }

  private recordOn(
    namespace: string,
    name: string,
    attempts: readonly WebhookAttempt[],
    now: () => Date,
  ): Promise<void> {
    const key = `${namespace}/${name}`;
    return new Promise((resolve) => {
      const queue = this.webhookQueues.get(key) ?? { pending: [], running: false };
      queue.pending.push({ attempts, done: resolve });
      this.webhookQueues.set(key, queue);
      if (!queue.running) void this.drainWebhookQueue(key, namespace, name, now);
    });
  }

  private async drainWebhookQueue(
    key: string,
    namespace: string,
    name: string,
    now: () => Date,
  ): Promise<void> {
    const queue = this.webhookQueues.get(key);
    if (queue === undefined) return;
    queue.running = true;
    while (queue.pending.length > 0) {
      const batch = queue.pending.splice(0);
      try {
        await this.updateWebhook(
          namespace,
          name,
          batch.flatMap((item) => item.attempts),
          now(),
        );
      } catch (err) {
        this.logger.warn({ err, namespace, webhook: name }, 'cannot record delivery attempts on the webhook');
      }
      for (const item of batch) item.done();
    }
    queue.running = false;
    this.webhookQueues.delete(key);
  }

  private async updateWebhook(
    namespace: string,
    name: string,
    attempts: readonly WebhookAttempt[],
    now: Date,
  ): Promise<void> {
    await updateStatus(
      this.store,
      WebhookType,
      { namespace, name },
      (webhook) => webhookStatusAfter(webhook.status, attempts, now),
      { caches: this.caches },
    );
  }
}

/** The Task status with the outbox after these results; an empty outbox is left out. */
function withOutbox(
  status: TaskStatus | undefined,
  results: ReadonlyMap<string, EntryResult>,
  gone: ReadonlySet<string>,
): TaskStatus {
  const { outbox: current = [], ...rest } = status ?? {};
  const outbox = mergeOutbox(current, results, gone);
  return outbox.length === 0 ? rest : { ...rest, outbox };
}
