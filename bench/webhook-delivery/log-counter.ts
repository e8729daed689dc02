import { z } from 'zod';
import { LOG_LEVEL } from './config.js';

const LogLineSchema = z.object({ level: z.string(), msg: z.string().optional() });

/** The controller's warnings and errors by message (and the whole log on stderr with BENCH_LOG_LEVEL). */
export class LogCounter {
  readonly counts = new Map<string, number>();

  write(line: string): void {
    if (LOG_LEVEL !== undefined) process.stderr.write(line);
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return;
    }
    const parsed = LogLineSchema.safeParse(json);
    if (!parsed.success || !['warn', 'error', 'fatal'].includes(parsed.data.level)) return;
    const key = `${parsed.data.level}: ${parsed.data.msg ?? ''}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** What was counted since the last take, as a report's phrase. */
  take(): string {
    const text = [...this.counts].map(([msg, count]) => `"${msg}" ×${count}`).join(', ');
    this.counts.clear();
    return text === '' ? 'none' : text;
  }
}
