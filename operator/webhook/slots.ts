import type { ReconcileRequest } from '../controller/types.js';

/**
 * Caps the attempts in flight to one webhook across all tasks, so a slow or hanging target holds at
 * most `limit` of the controller's workers and other webhooks keep being delivered. Never waits: a
 * caller that gets no slot leaves its entries for later and is remembered, and each freed slot wakes
 * one remembered task at once (a backlog drains at the receiver's pace, not one poll at a time).
 */
export class WebhookSlots {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Map<string, ReconcileRequest>>();
  /** Set by the controller: enqueues a task that was turned away. */
  onSlotFree: (request: ReconcileRequest) => void = () => undefined;

  constructor(private readonly limit: number) {}

  tryAcquire(key: string, waiter: ReconcileRequest): boolean {
    const held = this.inFlight.get(key) ?? 0;
    if (held >= this.limit) {
      const waiters = this.waiting.get(key) ?? new Map<string, ReconcileRequest>();
      waiters.set(`${waiter.namespace ?? ''}/${waiter.name}`, waiter);
      this.waiting.set(key, waiters);
      return false;
    }
    this.inFlight.set(key, held + 1);
    return true;
  }

  release(key: string): void {
    const held = (this.inFlight.get(key) ?? 0) - 1;
    if (held <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, held);
    const waiters = this.waiting.get(key);
    const next = waiters?.entries().next().value;
    if (waiters === undefined || next === undefined) return;
    waiters.delete(next[0]);
    if (waiters.size === 0) this.waiting.delete(key);
    this.onSlotFree(next[1]);
  }
}
