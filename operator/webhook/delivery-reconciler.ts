import {
  OrganizationType,
  SecretType,
  TaskType,
  WebhookType,
  organizationOfNamespace,
  secretValue,
} from '../../crds/index.js';
import type { OutboxEntry, Task, Webhook } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { TaskPresentation } from '../../platform/task-record.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { deliveryBody } from './delivery-body.js';
import type { AttemptOutcome, DeliveryClient } from './delivery-client.js';
import {
  earliestAttempt,
  failedEntryResult,
  inOccurrenceOrder,
  isDue,
  toAttempt,
  truncateError,
} from './outbox.js';
import type { EntryResult, WebhookAttempt } from './outbox.js';
import { OutboxWriter } from './outbox-writer.js';
import type { Signer, SigningKeys } from './signing-keys.js';
import type { WebhookMetrics } from './metrics.js';
import { WebhookSlots } from './slots.js';

/**
 * A due entry whose webhook has all its delivery slots taken is woken when a slot frees; this is
 * only the backstop.
 */
const BUSY_RETRY_MS = 5_000;

export interface DeliveryReconcilerOptions {
  store: ResourceStore;
  caches: Caches;
  logger: Logger;
  client: DeliveryClient;
  signingKeys: SigningKeys;
  metrics: WebhookMetrics;
  presentation: TaskPresentation;
  /** The installation allows private targets (organizations can allow them for themselves). */
  allowPrivateTargets: boolean;
  retrySchedule: readonly number[];
  /** Attempts in flight at once to one webhook, across all tasks. */
  perWebhookConcurrency: number;
  now: () => Date;
  random?: () => number;
}

/** What one reconcile of one task works with. */
interface Pass {
  task: Task;
  namespace: string;
  /** When the reconcile decided what is due. */
  now: Date;
  allowPrivate: boolean;
  signer: Signer;
  results: Map<string, EntryResult>;
  /** Attempts per webhook, in order, for its status. */
  attempts: Map<string, WebhookAttempt[]>;
  gone: Set<string>;
  /** Due entries not attempted: their webhook had all its slots taken. */
  skipped: Set<string>;
}

/**
 * Delivers the webhook outbox of a Task (docs/architecture.md#the-life-of-a-task, docs/api.md#webhooks). The Task reconciler writes
 * one entry per subscribed webhook in the same status write as the transition; this reconciler
 * POSTs the due ones (different webhooks concurrently, one webhook's entries in order), then writes
 * the outcome into the Task's status: an entry leaves the outbox only once it succeeded, failed for
 * the last time or its webhook is gone, so an operator killed mid-delivery delivers again with the
 * same webhook-id (at least once). Failed entries get `attempts`, `nextAttemptAt` and `lastError`.
 */
export class WebhookDeliveryReconciler implements Reconciler {
  private readonly slots: WebhookSlots;
  private readonly writer: OutboxWriter;

  constructor(private readonly options: DeliveryReconcilerOptions) {
    this.slots = new WebhookSlots(options.perWebhookConcurrency);
    this.slots.onSlotFree = (request) => {
      this.onSlotFree(request);
    };
    this.writer = new OutboxWriter(options.store, options.caches, options.logger);
  }

  /** Set by the controller: wakes a task a busy webhook turned away, once a slot is free. */
  onSlotFree: (request: ReconcileRequest) => void = () => undefined;

  async reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const namespace = request.namespace ?? '';
    const task = await this.taskWithOutbox(namespace, request.name);
    const outbox = task?.status?.outbox ?? [];
    if (task === undefined || outbox.length === 0) return undefined;
    const pass: Pass = {
      task,
      namespace,
      now: this.options.now(),
      allowPrivate: this.allowPrivate(namespace),
      signer: await this.options.signingKeys.get(),
      results: new Map(),
      attempts: new Map(),
      gone: new Set(),
      skipped: new Set(),
    };
    const groups = await this.dueGroups(pass, outbox);
    const settled = await Promise.allSettled(
      [...groups].map(([name, group]) => this.deliverGroup(pass, name, group, signal)),
    );
    // What is known is recorded even when a group failed (or shutdown cut it off), so the other
    // webhooks' deliveries are not made again. The webhooks first: once an entry has left the outbox,
    // its webhook's status tells what became of it.
    await this.writer.updateWebhooks(namespace, pass.attempts, this.options.now);
    const written = await this.writer.writeOutbox(task, pass.results, pass.gone);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw new Error('delivering webhooks', { cause: failed.reason });
    return this.requeue(written?.status?.outbox ?? [], pass.skipped);
  }

  /** The task as stored, when it has entries to deliver. */
  private async taskWithOutbox(namespace: string, name: string): Promise<Task | undefined> {
    // Most task changes are prompt progress: the cache (which has seen the change that woke us)
    // answers those without a round trip.
    const cached = this.options.caches.get(TaskType, namespace, name);
    if (cached !== undefined && (cached.status?.outbox ?? []).length === 0) return undefined;
    return this.options.store.get(TaskType, namespace, name);
  }

  private allowPrivate(namespace: string): boolean {
    if (this.options.allowPrivateTargets) return true;
    const org = organizationOfNamespace(this.options.caches.list(OrganizationType), namespace);
    return org?.spec.allowPrivateWebhookTargets === true;
  }

  /**
   * What to attempt now, per webhook, in the order the events occurred (see `toAttempt`). Entries of
   * a webhook that is gone or inactive are dropped, due or not: they will never be delivered.
   */
  private async dueGroups(pass: Pass, outbox: readonly OutboxEntry[]): Promise<Map<string, OutboxEntry[]>> {
    const pending = new Map<string, OutboxEntry[]>();
    for (const entry of inOccurrenceOrder(outbox))
      pending.set(entry.webhook, [...(pending.get(entry.webhook) ?? []), entry]);
    const groups = new Map<string, OutboxEntry[]>();
    for (const [name, entries] of pending) {
      if ((await this.activeWebhook(pass.namespace, name)) === undefined) {
        for (const entry of entries) this.settle(pass, { id: entry.id, outcome: 'dropped' }, entry);
        continue;
      }
      const due = toAttempt(entries, pass.now);
      if (due.length > 0) groups.set(name, due);
    }
    return groups;
  }

  /** The webhook when it exists and is active. The cache may lag a new webhook: the store confirms a miss. */
  private async activeWebhook(namespace: string, name: string): Promise<Webhook | undefined> {
    const usable = (webhook: Webhook | undefined): webhook is Webhook =>
      webhook !== undefined &&
      webhook.metadata.deletionTimestamp === undefined &&
      webhook.status?.isActive !== false;
    const cached = this.options.caches.get(WebhookType, namespace, name);
    if (usable(cached)) return cached;
    const stored = await this.options.store.get(WebhookType, namespace, name);
    return usable(stored) ? stored : undefined;
  }

  /** One webhook's due entries, one after another, while it holds a delivery slot. */
  private async deliverGroup(
    pass: Pass,
    name: string,
    entries: OutboxEntry[],
    signal: AbortSignal,
  ): Promise<void> {
    const key = `${pass.namespace}/${name}`;
    const waiter = { namespace: pass.namespace, name: pass.task.metadata.name };
    if (!this.slots.tryAcquire(key, waiter)) {
      for (const entry of entries) pass.skipped.add(entry.id);
      return;
    }
    try {
      for (const entry of entries) {
        // Read again for each entry: a 410 (here or from another task) may have disabled it meanwhile.
        const webhook = pass.gone.has(name) ? undefined : await this.activeWebhook(pass.namespace, name);
        if (webhook === undefined) this.settle(pass, { id: entry.id, outcome: 'dropped' }, entry);
        else await this.deliverEntry(pass, webhook, entry, signal);
      }
    } finally {
      this.slots.release(key);
    }
  }

  private async deliverEntry(
    pass: Pass,
    webhook: Webhook,
    entry: OutboxEntry,
    signal: AbortSignal,
  ): Promise<void> {
    const { metrics } = this.options;
    const started = performance.now();
    const outcome = await this.attempt(pass, webhook, entry, signal);
    metrics.attemptDuration.labels(outcome.kind).observe((performance.now() - started) / 1000);
    const name = webhook.metadata.name;
    const record = (attempt: WebhookAttempt): void => {
      pass.attempts.set(name, [...(pass.attempts.get(name) ?? []), attempt]);
    };
    switch (outcome.kind) {
      case 'success':
        record({ kind: 'success' });
        this.settle(pass, { id: entry.id, outcome: 'success' }, entry);
        return;
      case 'gone':
        record({ kind: 'gone' });
        pass.gone.add(name);
        this.settle(pass, { id: entry.id, outcome: 'gone' }, entry);
        return;
      case 'failure': {
        record({ kind: 'failure', error: outcome.error });
        const result = failedEntryResult(entry, outcome, this.options.retrySchedule, this.options.now(), {
          due: isDue(entry, pass.now),
          ...(this.options.random === undefined ? {} : { random: this.options.random }),
        });
        this.settle(pass, result, entry, outcome.error);
        return;
      }
    }
  }

  /** Builds, signs and sends one attempt; a missing secret is a failed attempt, not a skipped header. */
  private async attempt(
    pass: Pass,
    webhook: Webhook,
    entry: OutboxEntry,
    signal: AbortSignal,
  ): Promise<AttemptOutcome> {
    const secretRef = webhook.spec.secretRef;
    let secret: string | undefined;
    if (secretRef !== undefined) {
      const stored = await this.options.store.get(SecretType, pass.namespace, secretRef.name);
      secret = stored === undefined ? undefined : secretValue(stored, 'secret');
      if (secret === undefined)
        return { kind: 'failure', error: `the webhook's Secret ${secretRef.name} (key "secret") is missing` };
    }
    const body = JSON.stringify(deliveryBody(pass.task, entry, this.options.presentation));
    return this.options.client.deliver(
      {
        url: webhook.spec.url,
        allowPrivate: pass.allowPrivate,
        webhookId: entry.id,
        body,
        sign: (id, timestamp, text) => pass.signer.sign(id, timestamp, text),
        secret,
      },
      signal,
    );
  }

  private settle(pass: Pass, result: EntryResult, entry: OutboxEntry, error?: string): void {
    const { outcome } = result;
    pass.results.set(entry.id, result);
    this.options.metrics.count(entry.event, outcome);
    const context = {
      task: pass.task.metadata.name,
      namespace: pass.namespace,
      webhook: entry.webhook,
      delivery: entry.id,
      event: entry.event,
      attempt: entry.attempts + 1,
      ...(error === undefined ? {} : { error: truncateError(error) }),
    };
    const logger = this.options.logger;
    if (outcome === 'success') logger.debug(context, 'webhook delivered');
    else if (outcome === 'failure') logger.info(context, 'webhook delivery failed; will retry');
    else logger.warn(context, `webhook delivery ${outcome === 'dropped' ? 'dropped' : 'ended'}: ${outcome}`);
  }

  /** Again when the earliest entry is due; soon when a webhook was busy (never at once for those: no hot loop). */
  private requeue(outbox: readonly OutboxEntry[], skipped: ReadonlySet<string>): ReconcileResult | undefined {
    const now = this.options.now();
    const waiting = outbox.filter((entry) => !skipped.has(entry.id));
    const busy = waiting.length < outbox.length ? now.getTime() + BUSY_RETRY_MS : undefined;
    const candidates = [busy, earliestAttempt(waiting, now)].filter(
      (time): time is number => time !== undefined,
    );
    if (candidates.length === 0) return undefined;
    return { requeueAfterMs: Math.max(1, Math.min(...candidates) - now.getTime()) };
  }
}
