import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import { OrganizationType, TaskType, organizationNamespace } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { uploadedFileKey } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { listAllObjects } from '../../platform/objectstore/types.js';
import type { Caches, ReconcileRequest, ReconcileResult, Reconciler } from '../controller/index.js';

const HOUR = 3_600_000;

export interface UploadedFileExpiryOptions {
  objectStore: ObjectStore;
  logger: Logger;
  registry: Registry;
  /** docs/api.md#files-and-artifacts: unused uploads expire after 24 h. */
  maxAgeMs?: number;
  /** How often each organization's uploads are swept; also once per organization at start. Default 1 h. */
  intervalMs?: number;
  now?: () => Date;
}

/** The ids of uploaded files that a prompt not yet finished with its files still names. */
export function filesStillNeeded(tasks: readonly Task[]): Set<string> {
  const needed = new Set<string>();
  for (const task of tasks) {
    if (task.metadata.deletionTimestamp !== undefined || task.spec.deletedAt !== undefined) continue;
    const statusOf = new Map((task.status?.prompts ?? []).map((p) => [p.id, p.status]));
    for (const prompt of task.spec.prompts) {
      // Pending (not yet dispatched) prompts need their files; running ones too, since a runner copies
      // them while it starts the prompt: keeping a file a little longer costs nothing, losing it fails a prompt.
      const status = statusOf.get(prompt.id) ?? 'pending';
      if (status !== 'pending' && status !== 'running') continue;
      for (const file of prompt.files ?? []) needed.add(file.id);
    }
  }
  return needed;
}

/**
 * Deletes an organization's uploads (POST /files) older than `maxAgeMs` that no live task's pending
 * or running prompt names. One reconcile per organization: it runs once per organization when the
 * operator starts leading and again every `intervalMs` (requeueAfter); changes of the organization in
 * between do not sweep more often. Level-based: a failed or interrupted sweep is simply redone.
 */
export class UploadedFileExpiryReconciler implements Reconciler {
  private readonly lastSweep = new Map<string, number>();
  private readonly maxAgeMs: number;
  private readonly intervalMs: number;
  private readonly now: () => Date;
  private readonly expired: Counter;

  constructor(
    private readonly caches: Pick<Caches, 'get' | 'list'>,
    private readonly options: UploadedFileExpiryOptions,
  ) {
    this.maxAgeMs = options.maxAgeMs ?? 24 * HOUR;
    this.intervalMs = options.intervalMs ?? HOUR;
    this.now = options.now ?? (() => new Date());
    this.expired = new Counter({
      name: 'agentry_uploaded_files_expired_total',
      help: 'Uploaded files deleted because no prompt used them within their lifetime',
      registers: [options.registry],
    });
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult | undefined> {
    const org = this.caches.get(OrganizationType, undefined, request.name);
    if (org === undefined || org.metadata.deletionTimestamp !== undefined) {
      this.lastSweep.delete(request.name);
      return undefined;
    }
    const now = this.now().getTime();
    const since = now - (this.lastSweep.get(request.name) ?? -Infinity);
    if (since < this.intervalMs) return { requeueAfterMs: this.intervalMs - since };
    await this.sweep(organizationNamespace(org), now);
    this.lastSweep.set(request.name, now);
    return { requeueAfterMs: this.intervalMs };
  }

  /** Deletes the namespace's expired, unneeded uploads; returns how many. */
  async sweep(namespace: string, now: number): Promise<number> {
    const prefix = uploadedFileKey(namespace, '');
    const needed = filesStillNeeded(this.caches.list(TaskType, namespace));
    const expired = (await listAllObjects(this.options.objectStore, prefix)).filter(
      (info) =>
        now - Date.parse(info.updatedAt) > this.maxAgeMs && !needed.has(info.key.slice(prefix.length)),
    );
    let deleted = 0;
    for (const info of expired) if (await this.options.objectStore.delete(info.key)) deleted++;
    if (deleted > 0) {
      this.expired.inc(deleted);
      this.options.logger.info({ namespace, deleted }, 'deleted expired uploaded files');
    }
    return deleted;
  }
}
