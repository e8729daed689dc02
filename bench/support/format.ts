// How the benchmarks print figures: the same value reads the same way in every report.
import { loadavg } from 'node:os';

/** Milliseconds, with 2 decimals below 10, 1 below 100, and `overHundred` above. */
export const ms = (value: number, overHundred = 0): string =>
  `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : overHundred)} ms`;

/** `a` as a multiple of `b`: "1.25x". */
export const ratio = (a: number, b: number, digits = 2): string => `${(a / b).toFixed(digits)}x`;

/** `count` events over `spanMs` as a rate: "412/s". */
export const perSecond = (count: number, spanMs: number): string =>
  `${((count / spanMs) * 1000).toFixed(0)}/s`;

/** The 1, 5 and 15 minute load averages: other load on the machine shows in every figure. */
export const loadAverage = (digits = 2): string =>
  loadavg()
    .map((l) => l.toFixed(digits))
    .join(' ');
