import type { RefreshWork } from './refresh.js';

/** Work queued for a dataset, and the waitFor callers to wake when it is done. */
export interface PendingRefresh extends RefreshWork {
  waiters: (() => void)[];
}

const rank = (work: Pick<RefreshWork, 'full' | 'check'>): number => (work.full ? 2 : work.check ? 1 : 0);

/**
 * The refreshes waiting for the lake's loop, one entry a dataset: work queued for a dataset that
 * already waits joins it (a full load covers a check, a check covers changes; the changes add up),
 * and the strongest work names the trigger.
 */
export class RefreshQueue {
  private readonly pending = new Map<string, PendingRefresh>();

  add(name: string, work: RefreshWork, waiter?: () => void): void {
    const entry = this.pending.get(name) ?? {
      full: false,
      check: false,
      changes: [],
      trigger: work.trigger,
      waiters: [],
    };
    if (rank(work) >= rank(entry)) entry.trigger = work.trigger;
    entry.full ||= work.full;
    entry.check ||= work.check;
    entry.changes.push(...work.changes);
    if (waiter !== undefined) entry.waiters.push(waiter);
    this.pending.set(name, entry);
  }

  /** True when a check of the dataset already waits. */
  checkQueued(name: string): boolean {
    return this.pending.get(name)?.check === true;
  }

  /** Loads first (in config order), then the other refreshes in the order they came. */
  next(): string | undefined {
    for (const [name, entry] of this.pending) if (entry.full) return name;
    const [first] = this.pending.keys();
    return first;
  }

  /** Takes the dataset's work off the queue. */
  take(name: string): PendingRefresh | undefined {
    const entry = this.pending.get(name);
    this.pending.delete(name);
    return entry;
  }

  /** Drops the work of datasets no longer wanted, waking their waiters. */
  keepOnly(wanted: ReadonlySet<string>): void {
    for (const [name, entry] of [...this.pending]) {
      if (wanted.has(name)) continue;
      this.pending.delete(name);
      for (const wake of entry.waiters) wake();
    }
  }

  /** Drops all work, waking every waiter. */
  clear(): void {
    for (const entry of this.pending.values()) for (const wake of entry.waiters) wake();
    this.pending.clear();
  }
}
