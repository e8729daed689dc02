import type { ExecutorEvent } from './types.js';

/**
 * Delivers a run's events to `onEvent` strictly one after another, whichever stream they came
 * from, and makes sure the run has exactly one `init`, first: the CLI's own when its parser
 * provides one, else the runner's (sent before the first other event).
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

  /** Resolves once `event` (and everything queued before it) was delivered; rejects if delivery failed. */
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
    for (const item of queued) this.tail = this.tail.then(() => this.deliver(item));
    return this.tail;
  }

  /** Sends the runner's init unless one was sent. */
  ensureInit(): Promise<void> {
    return this.emit(this.defaultInit);
  }

  private async deliver(event: ExecutorEvent): Promise<void> {
    if (this.failure !== undefined) throw this.failure.error;
    try {
      await this.onEvent(event);
    } catch (err) {
      this.failure = { error: err };
      throw err;
    }
  }
}
