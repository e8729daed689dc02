import { appendFile } from 'node:fs/promises';

/**
 * Bench-only timestamps of each task event on its way to a client (bench/task-latency): where the
 * runner read it, made it durable and wrote it to its socket, where the API received it and wrote
 * it on. Off unless the process runs with AGENTRY_EVENT_TRACE=1; off, a mark is one boolean test.
 */
export type EventHop = 'runnerRead' | 'runnerDurable' | 'runnerSent' | 'apiReceived' | 'apiSent';

let enabled: boolean | undefined;
const marks: string[] = [];

/** Read once: the bench sets the variable before anything marks. */
export const eventTraceEnabled = (): boolean => (enabled ??= process.env.AGENTRY_EVENT_TRACE === '1');

/** Wall clock in ms with sub-ms resolution, comparable across processes and with Python's time.time_ns(). */
const wallMs = (): number => performance.timeOrigin + performance.now();

/** Notes that event `seq` of `taskId` passes `hop` now (or at `at`, a wallMs taken earlier). */
export function markEvent(hop: EventHop, taskId: string, seq: number, at?: number): void {
  if (!eventTraceEnabled()) return;
  marks.push(`${hop}\t${taskId}\t${seq}\t${(at ?? wallMs()).toFixed(3)}`);
}

/** The current wall time when tracing, else 0 (spares the clock read on the production path). */
export const traceNow = (): number => (eventTraceEnabled() ? wallMs() : 0);

/** Takes the marks made so far, as `hop \t taskId \t seq \t wallMs` lines. */
export const takeEventMarks = (): string[] => marks.splice(0);

/**
 * Appends this process's marks to `path` every `everyMs` (a runner, whose marks the bench reads
 * from its state directory); resolves the stop function's promise after a last append.
 */
export function writeEventMarks(path: string, everyMs = 200): () => Promise<void> {
  if (!eventTraceEnabled()) return () => Promise.resolve();
  let writing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    const lines = takeEventMarks();
    if (lines.length === 0) return writing;
    writing = writing.then(() => appendFile(path, `${lines.join('\n')}\n`)).catch(() => undefined);
    return writing;
  };
  const timer = setInterval(() => void flush(), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    return flush();
  };
}
