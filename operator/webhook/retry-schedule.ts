import { parseDuration } from '../../platform/duration.js';

/**
 * When a failed webhook delivery is tried again (docs/api.md#webhooks). A schedule lists the delays after
 * each failed attempt: the first attempt is immediate, attempt n+1 follows attempt n by
 * `schedule[n-1]`, and once the last delay is used up the next failure is final. The default is the
 * Standard Webhooks example schedule: attempts at 0, then +5s, +5m, +30m, +2h, +5h, +10h, +10h
 * (8 attempts, about 28 hours apart at the end, some 1.2 days in all).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Each delay varies by up to this fraction either way, so failures of many tasks do not retry in lockstep. */
export const JITTER = 0.2;

/** Parses AGENTRY_WEBHOOK_RETRY_SCHEDULE: comma separated Go durations ("5s, 5m,30m"). */
export function parseRetrySchedule(text: string): number[] {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new Error('a webhook retry schedule needs at least one duration');
  return parts.map((part) => {
    try {
      return parseDuration(part);
    } catch (err) {
      throw new Error(`invalid webhook retry schedule "${text}"`, { cause: err });
    }
  });
}

export interface NextAttempt {
  /** The attempt that just failed was the last one: the delivery has failed for good. */
  exhausted: boolean;
  /** Milliseconds until the next attempt (0 when exhausted). */
  delayMs: number;
}

/**
 * The delay after a failed attempt. `attemptsBefore` counts the attempts made before the one that
 * just failed (the outbox entry's `attempts`). The scheduled delay gets ±20% jitter; a `Retry-After`
 * the receiver sent wins when it is longer, capped at the schedule's longest step so a receiver
 * cannot park a delivery for ever.
 */
export function nextAttempt(
  schedule: readonly number[],
  attemptsBefore: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): NextAttempt {
  const scheduled = schedule[attemptsBefore];
  if (scheduled === undefined) return { exhausted: true, delayMs: 0 };
  const jittered = Math.round(scheduled * (1 - JITTER + 2 * JITTER * random()));
  if (retryAfterMs === undefined || retryAfterMs <= jittered) return { exhausted: false, delayMs: jittered };
  const longest = Math.max(...schedule);
  return { exhausted: false, delayMs: Math.min(retryAfterMs, Math.max(longest, jittered)) };
}

/** How many attempts a delivery gets in all under `schedule`. */
export const totalAttempts = (schedule: readonly number[]): number => schedule.length + 1;
