// Reading a benchmark's settings from the environment, with a clear error for a bad value.
import { z } from 'zod';

/** `name` as a number ≥ 0, or `fallback` when unset or empty. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, not ${raw}`);
  return value;
}

/** `name` as a whole number ≥ `min` (rounded), or `fallback` when unset or empty. */
export const envCount = (name: string, fallback: number, min = 1): number =>
  Math.max(min, Math.round(envNumber(name, fallback)));

/** The levels a benchmark may give the stack's logger (BENCH_LOG_LEVEL). */
export const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
