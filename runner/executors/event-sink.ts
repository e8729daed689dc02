import type { ExecutorEvent } from './types.js';

/**
 * Delivers a run's events to `onEvent` in order, whichever stream they came from, and makes sure
 * the run has exactly one `init`, first: the CLI's own when its parser provides one, else the
 * runner's (sent before the first other event).
 *
 * Each event is handed to `onEvent` at once, without waiting for the previous one to be durable:
 * the event log assigns seqs in call order and makes the events waiting on one disk write durable
 * together (group commit). Readers await each chunk's events, so the pipe still pauses the executor.
 */
export class EventSink {
  private tail: Promise<void> = Promise.resolve();
  private initSent = false;
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly onEvent: (event: ExecutorEvent) => Promise<void>,
    private readonly defaultInit: ExecutorEvent,
  ) {}

  /** The first error `onEvent` threw, if any: after it, nothing more is delivered. */
  get failed(): { error: unknown } | undefined {
    return this.failure;
  }

  /** Resolves once `event` (and everything emitted before it) was delivered; rejects if delivery failed. */
  emit(event: ExecutorEvent): Promise<void> {
    const queued: ExecutorEvent[] = [];
    if (event.eventType === 'init') {
      if (this.initSent) return this.tail;
      this.initSent = true;
      queued.push(event);
    } else {
      if (!this.initSent) queued.push(this.defaultInit);
      this.initSent = true;
      queued.push(event);
    }
    const delivered = [this.tail, ...queued.map((item) => this.deliver(item))];
    this.tail = Promise.all(delivered).then(() => undefined);
    return this.tail;
  }

  /** Sends the runner's init unless one was sent. */
  ensureInit(): Promise<void> {
    return this.emit(this.defaultInit);
  }

  /** Calls `onEvent` at once (an async function runs synchronously up to its first await). */
  private async deliver(event: ExecutorEvent): Promise<void> {
    if (this.failure !== undefined) throw this.failure.error;
    try {
      await this.onEvent(event);
    } catch (err) {
      this.failure ??= { error: err };
      throw err;
    }
  }
}
