import { describe, expect, it } from '@jest/globals';
import { parseDuration } from '../../platform/duration.js';

describe('parseDuration', () => {
  it.each([
    ['15m', 900_000],
    ['1h30m', 5_400_000],
    ['0s', 0],
    ['250ms', 250],
    ['2h', 7_200_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '15', 'm', '1x', '15m ', '-1s'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });
});
