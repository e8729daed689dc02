/**
 * Caps the attempts in flight to one webhook across all tasks, so a slow or hanging target holds at
 * most `limit` of the controller's workers and other webhooks keep being delivered. Never waits: a
 * caller that gets no slot leaves its entries for a later reconcile.
 */
export class WebhookSlots {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly limit: number) {}

  tryAcquire(key: string): boolean {
    const held = this.inFlight.get(key) ?? 0;
    if (held >= this.limit) return false;
    this.inFlight.set(key, held + 1);
    return true;
  }

  release(key: string): void {
    const held = (this.inFlight.get(key) ?? 0) - 1;
    if (held <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, held);
  }
}
