/** The window refillPerMinute counts over. */
const WINDOW_MS = 60_000;

/**
 * How many members each pool may still make this minute: a sliding window of the times it made
 * them, so that no 60 s ever sees more than refillPerMinute (a token bucket would allow twice that
 * across a window's edge). Kept in memory, and seeded the first time a pool is seen from its
 * members' creation times, so a restarted operator (or a new leader) does not start with a full
 * budget. Members deleted meanwhile are not seen: at most those are made again early.
 */
export class RefillBudget {
  private readonly made = new Map<string, number[]>();
  private readonly seeded = new Set<string>();

  /** Counts the members made before this process saw the pool (their creation times), once per pool. */
  seed(pool: string, createdAt: readonly number[]): void {
    if (this.seeded.has(pool)) return;
    this.seeded.add(pool);
    const known = this.made.get(pool) ?? [];
    this.made.set(
      pool,
      [...createdAt, ...known].sort((a, b) => a - b),
    );
  }

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
    this.seeded.delete(pool);
  }

  private recent(pool: string, now: number): number[] {
    const times = (this.made.get(pool) ?? []).filter((time) => time > now - WINDOW_MS);
    if (times.length === 0) this.made.delete(pool);
    else this.made.set(pool, times);
    return times;
  }
}
