import type { OutboxEntry, WebhookStatus } from '../../crds/index.js';
import type { AttemptOutcome } from './delivery-client.js';
import type { DeliveryOutcome } from './metrics.js';
import { nextAttempt } from './retry-schedule.js';

/** The longest `lastError` the resources accept. */
const MAX_ERROR_LENGTH = 1024;

export const truncateError = (text: string): string =>
  text.length <= MAX_ERROR_LENGTH ? text : `${text.slice(0, MAX_ERROR_LENGTH - 1)}…`;

/** What one reconcile decided for one outbox entry: it leaves the outbox, or waits for another attempt. */
export type EntryResult =
  | { id: string; outcome: Exclude<DeliveryOutcome, 'failure'> }
  | { id: string; outcome: 'failure'; attempts: number; nextAttemptAt: string; lastError: string };

/** An entry is due when its next attempt time has come (no time: at once). */
export const isDue = (entry: OutboxEntry, now: Date): boolean =>
  entry.nextAttemptAt === undefined || Date.parse(entry.nextAttemptAt) <= now.getTime();

/** Oldest event first; equal times keep the outbox order (the order the Task reconciler wrote them). */
export const inOccurrenceOrder = (outbox: readonly OutboxEntry[]): OutboxEntry[] =>
  [...outbox].sort((a, b) => Date.parse(a.occurredAt) - Date.parse(b.occurredAt));

/**
 * What to attempt now of one webhook's entries of one task (oldest first): every entry up to the
 * last due one. An older entry still waiting for its retry is pulled forward with a newer one that is
 * due, so a receiver that comes back gets a task's events in order (created, running, completed)
 * rather than in the order their jittered retries happen to fall due (see `failedEntryResult` for
 * what an early attempt that fails does to the entry).
 */
export function toAttempt(entries: readonly OutboxEntry[], now: Date): OutboxEntry[] {
  let last = -1;
  entries.forEach((entry, index) => {
    if (isDue(entry, now)) last = index;
  });
  return entries.slice(0, last + 1);
}

/**
 * The result of an attempt on `entry` that did not succeed, under `schedule`. An attempt made before
 * the entry was due (pulled forward by `toAttempt`) is a bonus: it records the error but keeps the
 * entry's own schedule, so being pulled forward never makes a delivery give up sooner.
 */
export function failedEntryResult(
  entry: OutboxEntry,
  outcome: Extract<AttemptOutcome, { kind: 'failure' }>,
  schedule: readonly number[],
  now: Date,
  options: { due: boolean; random?: () => number },
): EntryResult {
  const lastError = truncateError(outcome.error);
  if (!options.due && entry.nextAttemptAt !== undefined) {
    return {
      id: entry.id,
      outcome: 'failure',
      attempts: entry.attempts,
      nextAttemptAt: entry.nextAttemptAt,
      lastError,
    };
  }
  const next = nextAttempt(schedule, entry.attempts, outcome.retryAfterMs, options.random);
  if (next.exhausted) return { id: entry.id, outcome: 'exhausted' };
  return {
    id: entry.id,
    outcome: 'failure',
    attempts: entry.attempts + 1,
    nextAttemptAt: new Date(now.getTime() + next.delayMs).toISOString(),
    lastError,
  };
}

/**
 * Applies a reconcile's results to the outbox as it is NOW (re-read after the deliveries): entries
 * matched by id, so entries the Task reconciler added meanwhile stay untouched; entries of webhooks
 * that answered 410 leave too, whenever they were added.
 */
export function mergeOutbox(
  current: readonly OutboxEntry[],
  results: ReadonlyMap<string, EntryResult>,
  goneWebhooks: ReadonlySet<string>,
): OutboxEntry[] {
  const merged: OutboxEntry[] = [];
  for (const entry of current) {
    const result = results.get(entry.id);
    if (goneWebhooks.has(entry.webhook)) continue;
    if (result === undefined) merged.push(entry);
    else if (result.outcome === 'failure') {
      const { attempts, nextAttemptAt, lastError } = result;
      merged.push({ ...entry, attempts, nextAttemptAt, lastError });
    }
  }
  return merged;
}

/** When the earliest remaining entry is due, or undefined when the outbox is empty. */
export function earliestAttempt(outbox: readonly OutboxEntry[], now: Date): number | undefined {
  if (outbox.length === 0) return undefined;
  return Math.min(
    ...outbox.map((entry) =>
      entry.nextAttemptAt === undefined ? now.getTime() : Date.parse(entry.nextAttemptAt),
    ),
  );
}

/** One attempt's effect on its webhook's status. */
export type WebhookAttempt = { kind: 'success' } | { kind: 'failure'; error: string } | { kind: 'gone' };

export const GONE_ERROR = 'the target answered 410 Gone; the webhook was disabled';

/**
 * A webhook's status after a series of attempts, in the order they were made.
 *
 * `failureCount` counts consecutive failed delivery ATTEMPTS (every failed attempt, retries
 * included), and a success resets it: so a target that is down shows a growing count within
 * seconds, rather than staying at 0 for the day a delivery takes to exhaust its schedule.
 * `lastTriggeredAt` is the time of the last attempt, whatever its outcome. A 410 disables the
 * webhook and leaves the count as it was.
 */
export function webhookStatusAfter(
  status: WebhookStatus | undefined,
  attempts: readonly WebhookAttempt[],
  now: Date,
): WebhookStatus {
  let next: WebhookStatus = { ...status };
  for (const attempt of attempts) {
    next = { ...next, lastTriggeredAt: now.toISOString() };
    switch (attempt.kind) {
      case 'success': {
        const { lastError: _cleared, ...rest } = next;
        next = { ...rest, failureCount: 0 };
        break;
      }
      case 'failure':
        next = {
          ...next,
          failureCount: (next.failureCount ?? 0) + 1,
          lastError: truncateError(attempt.error),
        };
        break;
      case 'gone':
        next = { ...next, isActive: false, lastError: GONE_ERROR };
        break;
    }
  }
  return next;
}
