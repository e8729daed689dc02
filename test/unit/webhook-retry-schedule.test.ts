import { describe, expect, it } from '@jest/globals';
import { parseRetryAfter } from '../../operator/webhook/delivery-client.js';
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  nextAttempt,
  parseRetrySchedule,
  totalAttempts,
} from '../../operator/webhook/retry-schedule.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const middle = (): number => 0.5;

describe('the default retry schedule', () => {
  it("is Standard Webhooks' example: 0, then +5s, +5m, +30m, +2h, +5h, +10h, +10h", () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect(totalAttempts(DEFAULT_RETRY_SCHEDULE_MS)).toBe(8);
  });

  it('waits schedule[n] after the attempt that followed n earlier attempts', () => {
    const delays = DEFAULT_RETRY_SCHEDULE_MS.map((_, n) =>
      nextAttempt(DEFAULT_RETRY_SCHEDULE_MS, n, undefined, middle),
    );
    expect(delays.map((d) => d.delayMs)).toEqual([...DEFAULT_RETRY_SCHEDULE_MS]);
    expect(delays.every((d) => !d.exhausted)).toBe(true);
  });
});

describe('parseRetrySchedule (AGENTRY_WEBHOOK_RETRY_SCHEDULE)', () => {
  it('reads comma separated Go durations, spaces allowed', () => {
    expect(parseRetrySchedule('5s, 5m,30m ,1h30m,200ms')).toEqual([5 * S, 5 * M, 30 * M, 90 * M, 200]);
  });

  it('refuses a bad duration, naming the schedule', () => {
    expect(() => parseRetrySchedule('5s,soon')).toThrow('invalid webhook retry schedule "5s,soon"');
  });

  it('refuses an empty schedule', () => {
    expect(() => parseRetrySchedule(' , ')).toThrow('at least one duration');
  });
});

describe('jitter', () => {
  const schedule = [10 * S];

  it('stays within ±20% of the scheduled delay', () => {
    expect(nextAttempt(schedule, 0, undefined, () => 0).delayMs).toBe(8 * S);
    expect(nextAttempt(schedule, 0, undefined, () => 0.999999).delayMs).toBeLessThanOrEqual(12 * S);
    for (let i = 0; i < 1000; i++) {
      const { delayMs } = nextAttempt(schedule, 0);
      expect(delayMs).toBeGreaterThanOrEqual(8 * S);
      expect(delayMs).toBeLessThanOrEqual(12 * S);
    }
  });

  it('actually varies', () => {
    const delays = new Set(Array.from({ length: 50 }, () => nextAttempt(schedule, 0).delayMs));
    expect(delays.size).toBeGreaterThan(10);
  });
});

describe('Retry-After', () => {
  const schedule = [1 * S, 5 * M];

  it('wins when longer than the scheduled delay', () => {
    expect(nextAttempt(schedule, 0, 30 * S, middle).delayMs).toBe(30 * S);
  });

  it('does not shorten the scheduled delay', () => {
    expect(nextAttempt(schedule, 1, 30 * S, middle).delayMs).toBe(5 * M);
  });

  it("is capped at the schedule's longest step", () => {
    expect(nextAttempt(schedule, 0, 24 * H, middle).delayMs).toBe(5 * M);
  });

  it('is read as seconds or as an HTTP date', () => {
    const now = new Date('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:01:30 GMT', now)).toBe(90 * S);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('exhaustion', () => {
  it('ends the delivery when the last scheduled attempt fails', () => {
    const schedule = [200, 200];
    expect(nextAttempt(schedule, 1).exhausted).toBe(false);
    expect(nextAttempt(schedule, 2)).toEqual({ exhausted: true, delayMs: 0 });
    expect(nextAttempt(schedule, 2, 100)).toEqual({ exhausted: true, delayMs: 0 });
  });

  it('after 8 attempts with the default schedule', () => {
    expect(nextAttempt(DEFAULT_RETRY_SCHEDULE_MS, 6).exhausted).toBe(false);
    expect(nextAttempt(DEFAULT_RETRY_SCHEDULE_MS, 7).exhausted).toBe(true);
  });
});
