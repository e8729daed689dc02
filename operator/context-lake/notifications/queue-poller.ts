import { setTimeout as sleep } from 'node:timers/promises';
import { isQueueMissing } from '../../../platform/lake-notifications/queues.js';
import type { QueueMessage } from '../../../platform/lake-notifications/queues.js';
import type { NotificationQueue } from '../../../platform/lake-notifications/types.js';
import type { Logger } from '../../../platform/log.js';
import type { NotificationMetrics } from './notification-metrics.js';

export interface QueuePollerOptions {
  namespace: string;
  queue: NotificationQueue;
  /** Aborted when the controller stops (shutdown, lost lease): the loop ends with it. */
  signal: AbortSignal;
  receive: (queueUrl: string, signal: AbortSignal) => Promise<QueueMessage[]>;
  handle: (messages: readonly QueueMessage[]) => Promise<void>;
  /** The queue is gone: the loop has ended; the reconciler should create it again. */
  onQueueMissing: () => void;
  metrics: NotificationMetrics;
  logger: Logger;
  /** Back-off after a failed receive: from this, doubling, to 30 s. */
  errorDelayMs?: number;
}

const MAX_ERROR_DELAY_MS = 30_000;

/** A call, not a property read: the signal is aborted by others while the loop awaits. */
const isAborted = (signal: AbortSignal): boolean => signal.aborted;

/**
 * One organization's long-poll loop: receive (20 s wait, 10 messages), hand the batch over, again.
 * `stop` (or the controller's signal) ends a receive in flight at once; a batch being handled is
 * finished first, so its messages are either deleted or come back.
 */
export class QueuePoller {
  readonly done: Promise<void>;
  private readonly abort = new AbortController();
  private readonly signal: AbortSignal;

  constructor(private readonly options: QueuePollerOptions) {
    this.signal = AbortSignal.any([options.signal, this.abort.signal]);
    this.done = this.run();
  }

  get queue(): NotificationQueue {
    return this.options.queue;
  }

  get stopped(): boolean {
    return this.signal.aborted;
  }

  stop(): Promise<void> {
    this.abort.abort(new Error('the notification poller is stopping'));
    return this.done;
  }

  private async run(): Promise<void> {
    const { namespace, queue, logger } = this.options;
    logger.info({ namespace, queue: queue.queueArn }, 'polling the notification queue');
    const firstDelay = this.options.errorDelayMs ?? 1000;
    let delay = firstDelay;
    while (!isAborted(this.signal)) {
      let messages: QueueMessage[];
      try {
        messages = await this.options.receive(queue.queueUrl, this.signal);
        delay = firstDelay;
      } catch (err) {
        if (isAborted(this.signal)) break;
        if (!(await this.receiveFailed(err, delay))) return;
        delay = Math.min(delay * 2, MAX_ERROR_DELAY_MS);
        continue;
      }
      if (messages.length === 0) continue;
      try {
        await this.options.handle(messages);
      } catch (err) {
        // The handler settles its own failures; anything else leaves the messages to come back.
        logger.error({ err, namespace }, 'handling bucket events failed');
      }
    }
    logger.info({ namespace }, 'stopped polling the notification queue');
  }

  /** Counts and logs a failed receive; waits before the next, or ends the loop (false) when the queue is gone. */
  private async receiveFailed(err: unknown, delayMs: number): Promise<boolean> {
    const { namespace, logger, metrics } = this.options;
    metrics.pollErrors.inc();
    if (isQueueMissing(err)) {
      logger.warn(
        { namespace, queue: this.options.queue.queueArn },
        'the notification queue is gone; creating it again',
      );
      this.abort.abort(new Error('the notification queue is gone'));
      this.options.onQueueMissing();
      return false;
    }
    logger.warn({ err, namespace, retryInMs: delayMs }, 'receiving bucket events failed');
    try {
      await sleep(delayMs, undefined, { signal: this.signal });
    } catch {
      // Aborted: the loop condition ends it.
    }
    return true;
  }
}
