/** The window refillPerMinute counts over. */
const WINDOW_MS = 60_000;

/**
 * How many members each pool may still make this minute: a sliding window of the times it made
 * them, so that no 60 s ever sees more than refillPerMinute (a token bucket would allow twice that
 * across a window's edge). In memory: a restarted operator starts with a full budget.
 */
export class RefillBudget {
  private readonly made = new Map<string, number[]>();

  /** How many may be made at `now` under `perMinute`. */
  remaining(pool: string, perMinute: number, now: number): number {
    return Math.max(0, perMinute - this.recent(pool, now).length);
  }

  /** Counts one member made at `now`. */
  spend(pool: string, now: number): void {
    this.made.set(pool, [...this.recent(pool, now), now]);
  }

  /** When the next one may be made, once the budget is spent: the oldest in the window leaves it. */
  nextAt(pool: string, perMinute: number, now: number): number {
    const times = this.recent(pool, now);
    if (times.length < perMinute) return now;
    return (times[times.length - perMinute] ?? now) + WINDOW_MS;
  }

  forget(pool: string): void {
    this.made.delete(pool);
  }

  private recent(pool: string, now: number): number[] {
    const times = (this.made.get(pool) ?? []).filter((time) => time > now - WINDOW_MS);
    if (times.length === 0) this.made.delete(pool);
    else this.made.set(pool, times);
    return times;
  }
}
