import { MAX_EGRESS_DENIALS } from '../crds/egress.js';
import type { EgressDenial } from '../crds/egress.js';
import { TaskType } from '../crds/index.js';
import type { Task, TaskStatus } from '../crds/index.js';
import type { EventRecorder } from '../platform/events.js';
import type { Logger } from '../platform/log.js';
import { updateStatus } from '../platform/store/status-writer.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { DenialReason } from './metrics.js';

/** At most one status write per task this often: a loop of refused connections must not flood the store. */
export const DENIAL_FLUSH_INTERVAL_MS = 1000;

interface PendingDenial {
  host: string;
  port: number;
  reason: DenialReason;
  firstAt: string;
  lastAt: string;
  count: number;
}

const denialKey = (denial: { host: string; port: number; reason: string }): string =>
  `${denial.host}:${denial.port}:${denial.reason}`;

/** `pending` merged into a task's denials: same host, port and reason add up; new ones fill up to the cap. */
export function mergeDenials(
  stored: readonly EgressDenial[],
  pending: readonly PendingDenial[],
): EgressDenial[] {
  const merged = stored.map((denial) => ({ ...denial }));
  for (const denial of pending) {
    const known = merged.find((entry) => denialKey(entry) === denialKey(denial));
    if (known !== undefined) {
      known.count += denial.count;
      if (denial.lastAt > known.lastAt) known.lastAt = denial.lastAt;
    } else if (merged.length < MAX_EGRESS_DENIALS) merged.push({ ...denial });
  }
  return merged;
}

const taskKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * The refusals of each task, written to `status.egressDenials` and as `EgressDenied` Events.
 * Refusals add up in memory and are written at most once a second per task (read-merge-write,
 * version-checked, keeping every other status field); a write that fails is retried with the
 * counts kept, and `stop()` writes what is left.
 */
export class DenialLedger {
  private readonly pending = new Map<string, { namespace: string; name: string; denials: PendingDenial[] }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly lastFlush = new Map<string, number>();
  private readonly flushing = new Set<Promise<void>>();

  constructor(
    private readonly store: ResourceStore,
    private readonly events: EventRecorder,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  record(task: Task, host: string, port: number, reason: DenialReason, method: string): void {
    const namespace = task.metadata.namespace ?? 'default';
    const key = taskKey(namespace, task.metadata.name);
    const at = this.now().toISOString();
    const entry = this.pending.get(key) ?? { namespace, name: task.metadata.name, denials: [] };
    this.pending.set(key, entry);
    const known = entry.denials.find((denial) => denialKey(denial) === denialKey({ host, port, reason }));
    if (known === undefined) entry.denials.push({ host, port, reason, firstAt: at, lastAt: at, count: 1 });
    else {
      known.count += 1;
      known.lastAt = at;
    }
    void this.events.record(task, 'Warning', 'EgressDenied', `denied ${method} ${host}:${port} (${reason})`);
    this.schedule(key);
  }

  /** Writes everything pending now (shutdown, tests). */
  async flushAll(): Promise<void> {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.flushing]);
    await Promise.all([...this.pending.keys()].map((key) => this.flush(key)));
  }

  private schedule(key: string): void {
    if (this.timers.has(key)) return;
    const since = Date.now() - (this.lastFlush.get(key) ?? 0);
    const delay = Math.max(0, DENIAL_FLUSH_INTERVAL_MS - since);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      const flush = this.flush(key);
      this.flushing.add(flush);
      void flush.finally(() => this.flushing.delete(flush));
    }, delay);
    timer.unref();
    this.timers.set(key, timer);
  }

  private async flush(key: string): Promise<void> {
    const entry = this.pending.get(key);
    if (entry === undefined) return;
    this.pending.delete(key);
    this.lastFlush.set(key, Date.now());
    try {
      await updateStatus(this.store, TaskType, entry, (current): TaskStatus => {
        const status: TaskStatus = current.status ?? {};
        return { ...status, egressDenials: mergeDenials(status.egressDenials ?? [], entry.denials) };
      });
    } catch (err) {
      this.logger.warn({ err, task: key }, 'recording egress denials failed; retrying');
      this.requeue(key, entry);
    }
  }

  /** Counts that could not be written go back in front of any recorded meanwhile. */
  private requeue(key: string, entry: { namespace: string; name: string; denials: PendingDenial[] }): void {
    const newer = this.pending.get(key);
    const denials = newer === undefined ? entry.denials : mergeDenials(entry.denials, newer.denials);
    this.pending.set(key, { ...entry, denials: denials.map((denial) => ({ ...denial })) });
    this.schedule(key);
  }
}
