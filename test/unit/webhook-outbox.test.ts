import { describe, expect, it } from '@jest/globals';
import type { OutboxEntry } from '../../crds/index.js';
import {
  GONE_ERROR,
  earliestAttempt,
  failedEntryResult,
  inOccurrenceOrder,
  mergeOutbox,
  toAttempt,
  webhookStatusAfter,
} from '../../operator/webhook/outbox.js';
import type { EntryResult } from '../../operator/webhook/outbox.js';

const now = new Date('2025-03-01T12:00:00.000Z');
const entry = (id: string, webhook = 'wh-a', extra: Partial<OutboxEntry> = {}): OutboxEntry => ({
  id,
  webhook,
  event: 'task.completed',
  occurredAt: '2025-03-01T11:59:00.000Z',
  attempts: 0,
  nextAttemptAt: '2025-03-01T11:59:00.000Z',
  ...extra,
});

describe('mergeOutbox', () => {
  const results = new Map<string, EntryResult>([
    ['done', { id: 'done', outcome: 'success' }],
    [
      'retry',
      {
        id: 'retry',
        outcome: 'failure',
        attempts: 1,
        nextAttemptAt: '2025-03-01T12:00:05.000Z',
        lastError: 'HTTP 500',
      },
    ],
  ]);

  it('keeps an entry the Task reconciler added after the outbox was read', () => {
    const merged = mergeOutbox([entry('done'), entry('added-meanwhile'), entry('retry')], results, new Set());
    expect(merged.map((e) => e.id)).toEqual(['added-meanwhile', 'retry']);
  });

  it('records attempts, next attempt time and last error on a failed entry', () => {
    const [retried] = mergeOutbox([entry('retry')], results, new Set());
    expect(retried).toEqual({
      ...entry('retry'),
      attempts: 1,
      nextAttemptAt: '2025-03-01T12:00:05.000Z',
      lastError: 'HTTP 500',
    });
  });

  it('drops every entry of a webhook that answered 410, even ones not attempted', () => {
    const merged = mergeOutbox(
      [entry('x', 'gone'), entry('y', 'gone'), entry('z', 'other')],
      new Map(),
      new Set(['gone']),
    );
    expect(merged.map((e) => e.id)).toEqual(['z']);
  });
});

describe('toAttempt (one webhook, one task, oldest first)', () => {
  const at = (seconds: number): string => new Date(now.getTime() + seconds * 1000).toISOString();

  it('attempts every due entry', () => {
    const entries = [entry('a', 'w', { nextAttemptAt: at(-2) }), entry('b', 'w', { nextAttemptAt: at(0) })];
    expect(toAttempt(entries, now).map((e) => e.id)).toEqual(['a', 'b']);
  });

  it('leaves entries that are not due yet after the last due one', () => {
    const entries = [entry('a', 'w', { nextAttemptAt: at(-2) }), entry('b', 'w', { nextAttemptAt: at(30) })];
    expect(toAttempt(entries, now).map((e) => e.id)).toEqual(['a']);
  });

  it('pulls an older waiting entry forward with a newer due one, keeping the order', () => {
    const entries = [
      entry('old', 'w', { nextAttemptAt: at(300) }),
      entry('new', 'w', { nextAttemptAt: at(-1) }),
    ];
    expect(toAttempt(entries, now).map((e) => e.id)).toEqual(['old', 'new']);
  });

  it('attempts nothing when nothing is due', () => {
    expect(toAttempt([entry('a', 'w', { nextAttemptAt: at(5) })], now)).toEqual([]);
  });

  it('orders by occurrence, keeping the written order for equal times', () => {
    const ordered = inOccurrenceOrder([
      entry('late', 'w', { occurredAt: at(5) }),
      entry('first', 'w', { occurredAt: at(0) }),
      entry('second', 'w', { occurredAt: at(0) }),
    ]);
    expect(ordered.map((e) => e.id)).toEqual(['first', 'second', 'late']);
  });
});

describe('failedEntryResult', () => {
  it('schedules the next attempt from the entry attempts', () => {
    const result = failedEntryResult(
      entry('e', 'wh', { attempts: 1 }),
      { kind: 'failure', error: 'HTTP 503' },
      [100, 2000],
      now,
      { due: true, random: () => 0.5 },
    );
    expect(result).toEqual({
      id: 'e',
      outcome: 'failure',
      attempts: 2,
      nextAttemptAt: '2025-03-01T12:00:02.000Z',
      lastError: 'HTTP 503',
    });
  });

  it('is exhausted after the last scheduled attempt', () => {
    const result = failedEntryResult(
      entry('e', 'wh', { attempts: 2 }),
      { kind: 'failure', error: 'x' },
      [100, 2000],
      now,
      { due: true },
    );
    expect(result).toEqual({ id: 'e', outcome: 'exhausted' });
  });

  it('keeps the schedule of an entry attempted early (pulled forward), recording only the error', () => {
    const waiting = entry('e', 'wh', { attempts: 2, nextAttemptAt: '2025-03-01T12:05:00.000Z' });
    const result = failedEntryResult(waiting, { kind: 'failure', error: 'HTTP 502' }, [100, 2000], now, {
      due: false,
    });
    expect(result).toEqual({
      id: 'e',
      outcome: 'failure',
      attempts: 2,
      nextAttemptAt: '2025-03-01T12:05:00.000Z',
      lastError: 'HTTP 502',
    });
  });

  it('cuts a long error to what the resource accepts', () => {
    const result = failedEntryResult(entry('e'), { kind: 'failure', error: 'x'.repeat(5000) }, [100], now, {
      due: true,
    });
    expect(result.outcome === 'failure' && result.lastError.length).toBe(1024);
  });
});

describe('earliestAttempt', () => {
  it('is the soonest next attempt; an entry without one is due now', () => {
    expect(earliestAttempt([entry('a', 'w', { nextAttemptAt: '2025-03-01T12:00:09.000Z' })], now)).toBe(
      Date.parse('2025-03-01T12:00:09.000Z'),
    );
    expect(earliestAttempt([entry('a', 'w', { nextAttemptAt: undefined })], now)).toBe(now.getTime());
    expect(earliestAttempt([], now)).toBeUndefined();
  });
});

describe('webhookStatusAfter (failureCount counts consecutive failed attempts)', () => {
  it('adds one per failed attempt, keeping the last error', () => {
    const status = webhookStatusAfter(
      { isActive: true, failureCount: 2 },
      [
        { kind: 'failure', error: 'HTTP 500' },
        { kind: 'failure', error: 'ECONNREFUSED' },
      ],
      now,
    );
    expect(status).toEqual({
      isActive: true,
      failureCount: 4,
      lastError: 'ECONNREFUSED',
      lastTriggeredAt: now.toISOString(),
    });
  });

  it('resets to 0 and clears the error on a success', () => {
    const status = webhookStatusAfter(
      { isActive: true, failureCount: 7, lastError: 'HTTP 500' },
      [{ kind: 'failure', error: 'HTTP 500' }, { kind: 'success' }],
      now,
    );
    expect(status).toEqual({ isActive: true, failureCount: 0, lastTriggeredAt: now.toISOString() });
  });

  it('disables the webhook on 410 and says why', () => {
    const status = webhookStatusAfter({ isActive: true, failureCount: 1 }, [{ kind: 'gone' }], now);
    expect(status).toMatchObject({ isActive: false, failureCount: 1, lastError: GONE_ERROR });
  });
});
