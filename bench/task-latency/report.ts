import { ms as formatMs } from '../support/format.js';
import type { Summary } from '../support/stats.js';

/** Milliseconds as this bench prints them: 2 decimals below 10, 1 above. */
export const ms = (value: number): string => formatMs(value, 1);

/** One latency figure: its median and `tail`, with min, max and count. */
export function report(label: string, s: Summary, tail: 'p95' | 'p99'): void {
  console.log(
    `${label}: p50 ${ms(s.p50)}, ${tail} ${ms(s[tail])} (min ${ms(s.min)}, max ${ms(s.max)}, n=${s.n})`,
  );
}
