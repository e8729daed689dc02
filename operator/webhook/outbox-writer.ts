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
