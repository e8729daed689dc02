import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { z } from 'zod';

/** The fields of `agentry api`'s JSON log lines that tests and benches look at. */
const LogLineSchema = z.looseObject({
  msg: z.string(),
  worker: z.number().int().optional(),
  pid: z.number().int().optional(),
  code: z.number().int().nullable().optional(),
});
export type LogLine = z.infer<typeof LogLineSchema>;

interface Waiter {
  matches: (lines: readonly LogLine[]) => boolean;
  resolve: () => void;
}

/**
 * `agentry api` as a child process (from source or built), its JSON log lines collected as they
 * come, so that a test can wait for "api serving" from each worker, read worker pids, and count
 * who answered.
 */
export class ApiProcess {
  readonly lines: LogLine[] = [];
  private stderr = '';
  private readonly waiters = new Set<Waiter>();
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (text) => {
      const parsed = LogLineSchema.safeParse(safeJson(text));
      if (!parsed.success) return;
      this.lines.push(parsed.data);
      for (const waiter of this.waiters)
        if (waiter.matches(this.lines)) {
          this.waiters.delete(waiter);
          waiter.resolve();
        }
    });
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', resolve));
  }

  /** Spawns `command args` (e.g. node dist/cli/main.js api) with `env` only (plus PATH and HOME). */
  static start(command: string, args: string[], env: Record<string, string>): ApiProcess {
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: 'pipe',
    });
    return new ApiProcess(child);
  }

  /** The lines with message `msg`. */
  logged(msg: string): LogLine[] {
    return this.lines.filter((line) => line.msg === msg);
  }

  /** Resolves once the lines so far satisfy `matches`; rejects after `timeoutMs` or when the process exits. */
  async waitFor(
    what: string,
    matches: (lines: readonly LogLine[]) => boolean,
    timeoutMs = 60_000,
  ): Promise<void> {
    if (matches(this.lines)) return;
    let timer: NodeJS.Timeout | undefined;
    const waiter: Waiter = { matches, resolve: () => undefined };
    const matched = new Promise<void>((resolve) => (waiter.resolve = resolve));
    this.waiters.add(waiter);
    try {
      await Promise.race([
        matched,
        this.exited.then((code) => {
          throw new Error(`agentry api exited (${String(code)}) before ${what}; stderr: ${this.stderr}`);
        }),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => {
            reject(new Error(`no ${what} within ${String(timeoutMs)} ms; stderr: ${this.stderr}`));
          }, timeoutMs);
        }),
      ]);
    } finally {
      this.waiters.delete(waiter);
      clearTimeout(timer);
    }
  }

  /** Waits for `count` "api serving" lines (one per worker, or the only process's). */
  serving(count: number, timeoutMs = 60_000): Promise<void> {
    return this.waitFor(
      `${String(count)} serving`,
      () => this.logged('api serving').length >= count,
      timeoutMs,
    );
  }

  /** SIGTERM, then its exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
