import { TaskType, WebhookType } from '../../crds/index.js';
import type { OutboxEntry, Task, TaskStatus } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { deepEqual } from '../../platform/store/merge.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import { mergeOutbox, webhookStatusAfter } from './outbox.js';
import type { EntryResult, WebhookAttempt } from './outbox.js';

/** Conflicting writers (the Task reconciler, deliveries of other tasks) are outrun in this many tries. */
const WRITE_ATTEMPTS = 10;

/**
 * The status writes of webhook delivery, each a read-merge-write with a resourceVersion
 * precondition retried on Conflict: the Task reconciler adds outbox entries and writes the rest of
 * the Task's status meanwhile, and deliveries of other tasks update the same Webhook.
 */
export class OutboxWriter {
  constructor(
    private readonly store: ResourceStore,
    private readonly caches: Caches,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the results into the Task's outbox, changing nothing else; returns the Task as written
   * (or as read, when nothing changed), undefined once it is gone.
   */
  async writeOutbox(
    first: Task,
    results: ReadonlyMap<string, EntryResult>,
    gone: ReadonlySet<string>,
  ): Promise<Task | undefined> {
    const namespace = first.metadata.namespace ?? '';
    const name = first.metadata.name;
    let task: Task | undefined = first;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS && task !== undefined; attempt++) {
      const current = task.status?.outbox ?? [];
      const outbox = mergeOutbox(current, results, gone);
      if (deepEqual(outbox, current)) return task;
      const written = await this.tryWriteOutbox(task, outbox);
      if (written !== 'conflict') return written;
      task = await this.store.get(TaskType, namespace, name);
    }
    if (task === undefined) return undefined;
    throw new Error(`writing the webhook outbox of task ${namespace}/${name}: too many conflicting writes`);
  }

  /** One write at the version read: the Task as written, 'conflict', or undefined when it is gone. */
  private async tryWriteOutbox(task: Task, outbox: OutboxEntry[]): Promise<Task | 'conflict' | undefined> {
    const { outbox: _old, ...rest } = task.status ?? {};
    const status: TaskStatus = outbox.length === 0 ? rest : { ...rest, outbox };
    try {
      const written = await this.store.replaceStatus(
        TaskType,
        { ...task, status },
        { resourceVersion: task.metadata.resourceVersion },
      );
      this.caches.observe(TaskType, written);
      return written;
    } catch (err) {
      if (isStoreError(err, 'NotFound')) return undefined;
      if (isStoreError(err, 'Conflict')) return 'conflict';
      const { namespace, name } = task.metadata;
      throw new Error(`writing the webhook outbox of task ${namespace ?? ''}/${name}`, { cause: err });
    }
  }

  /** Records the attempts on each webhook's status. Failures are logged: the outbox already holds the truth. */
  async updateWebhooks(
    namespace: string,
    attempts: ReadonlyMap<string, readonly WebhookAttempt[]>,
    now: Date,
  ): Promise<void> {
    await Promise.all(
      [...attempts].map(async ([name, list]) => {
        try {
          await this.updateWebhook(namespace, name, list, now);
        } catch (err) {
          this.logger.warn(
            { err, namespace, webhook: name },
            'cannot record delivery attempts on the webhook',
          );
        }
      }),
    );
  }

  private async updateWebhook(
    namespace: string,
    name: string,
    attempts: readonly WebhookAttempt[],
    now: Date,
  ): Promise<void> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const webhook = await this.store.get(WebhookType, namespace, name);
      if (webhook === undefined) return;
      const status = webhookStatusAfter(webhook.status, attempts, now);
      try {
        const written = await this.store.replaceStatus(
          WebhookType,
          { ...webhook, status },
          { resourceVersion: webhook.metadata.resourceVersion },
        );
        this.caches.observe(WebhookType, written);
        return;
      } catch (err) {
        if (isStoreError(err, 'NotFound')) return;
        if (!isStoreError(err, 'Conflict')) throw err;
      }
    }
    throw new Error(`updating the status of webhook ${namespace}/${name}: too many conflicting writes`);
  }
}
