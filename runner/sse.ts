import type { Response } from 'express';
import { eventTraceEnabled, markEvent, traceNow } from '../platform/event-trace.js';
import type { Logger } from '../platform/log.js';
import type { TaskEvent } from '../platform/runner-protocol.js';
import type { EventFilter, TaskEventLog } from './event-log.js';

export const DEFAULT_KEEPALIVE_MS = 15_000;
/**
 * A stream writes at most once per this interval: an event after a quiet spell leaves at once, a
 * burst's events within the interval leave together at its end. Each write costs the runner a
 * syscall and wakes the API and, through it, the client: at 1,000 events/s one write per event
 * was most of the event path's CPU, and under CPU load its latency.
 */
export const WRITE_INTERVAL_MS = 4;
/** Frames waiting for their write are written at once from this size: memory per stream stays bounded. */
const MAX_PENDING_CHARS = 64 * 1024;

/** One SSE frame: the seq is the event id, so a reconnecting client resumes with Last-Event-ID. */
export const sseFrame = (event: TaskEvent): string =>
  `id: ${event.seq}\nevent: event\ndata: ${JSON.stringify(event)}\n\n`;

export interface StreamOptions {
  events: TaskEventLog;
  taskId: string;
  filter: EventFilter;
  keepaliveMs: number;
  logger: Logger;
}

/**
 * Serves a task's events as server-sent events: the replay after `filter.after`, then live events,
 * with a keepalive comment so that proxies keep the connection. It never ends by itself (more
 * prompts may come); it stops following when the client goes away or the log closes.
 *
 * Back-pressure without loss: once the socket's buffer is full (`write` returns false) the stream
 * stops writing and remembers only the last seq it sent; on `drain` it catches up from the log
 * (whose events are durable and kept), then goes live again. A slow client thus holds at most one
 * buffer of frames in memory and is never cut for being slow.
 */
export async function streamTaskEvents(res: Response, options: StreamOptions): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();

  const open = (): boolean => !res.writableEnded && !res.destroyed;
  const cursor = new StreamCursor(options.filter.after ?? -1);
  let unfollow: (() => void) | undefined;
  const client = { gone: false };
  const keepalive = setInterval(() => {
    if (open()) res.write(': keepalive\n\n');
  }, options.keepaliveMs);
  const cleanUp = (): void => {
    client.gone = true;
    clearInterval(keepalive);
    unfollow?.();
  };
  // The response's close, not the request's: since Node 16 a request closes once its body is read.
  res.once('close', cleanUp);

  /** Frames taken, written together at the end of the turn or of the write interval. */
  let pending = '';
  /** Writes the turn's frames in one write; pauses (and catches up on drain) once the buffer is full. */
  let lastWrite = -Infinity;
  /** Bench-only: the seqs of the pending frames, marked as sent when they are written. */
  const traced: number[] = [];
  const flush = (): void => {
    const text = pending;
    pending = '';
    lastWrite = performance.now();
    const at = traceNow();
    for (const seq of traced.splice(0)) markEvent('runnerSent', options.taskId, seq, at);
    if (text === '' || !open() || res.write(text)) return;
    cursor.paused = true;
    res.once('drain', () => {
      catchUp().catch((err: unknown) => {
        options.logger.warn({ err, taskId: options.taskId }, 'an event stream cannot catch up; closing it');
        res.destroy();
      });
    });
  };
  /**
   * Takes one frame unless paused. The frames of one turn (a durable batch, a replay page), or of
   * one WRITE_INTERVAL_MS, leave in one write: one syscall, one chunk for the API to relay.
   */
  const send = (event: TaskEvent): void => {
    if (!cursor.take(event) || !open()) return;
    if (eventTraceEnabled()) traced.push(event.seq);
    if (pending === '') {
      const wait = lastWrite + WRITE_INTERVAL_MS - performance.now();
      if (wait <= 0) process.nextTick(flush);
      else setTimeout(flush, wait);
    }
    pending += sseFrame(event);
    // A big batch or replay goes out in slices, so that a full socket pauses it at once.
    if (pending.length >= MAX_PENDING_CHARS) flush();
  };
  /** Sends from the log what arrived while paused, until the client is level with the log or full again. */
  const catchUp = async (): Promise<void> => {
    while (cursor.paused && !client.gone && open()) {
      const page = await options.events.read(options.taskId, { ...options.filter, after: cursor.sent });
      cursor.paused = false;
      for (const event of page.events) send(event);
      flush();
      if (cursor.isPaused()) return; // full again: the next drain goes on from here
      // Live events delivered during the read were skipped: read again if any came.
      cursor.paused = cursor.behind();
    }
  };

  try {
    unfollow = await options.events.follow(options.taskId, options.filter, {
      onEvent: send,
      onEnd: () => {
        cleanUp();
        flush();
        res.end();
      },
    });
  } catch (err) {
    options.logger.error({ err, taskId: options.taskId }, 'cannot follow the event log');
    cleanUp();
    res.destroy();
    return;
  }
  // The client may have left while the log was loading: stop following at once.
  if (client.gone) unfollow();
}

/** Where a stream is: the last seq it wrote, and the newest one it saw while paused. */
class StreamCursor {
  paused = false;
  /** The newest seq delivered while paused (it is in the log, to be caught up). */
  private seen: number;

  constructor(public sent: number) {
    this.seen = sent;
  }

  /** Whether `event` is to be written now: not while paused, never one already sent. */
  take(event: TaskEvent): boolean {
    if (event.seq <= this.sent) return false;
    if (this.paused) {
      this.seen = Math.max(this.seen, event.seq);
      return false;
    }
    this.sent = event.seq;
    this.seen = Math.max(this.seen, event.seq);
    return true;
  }

  /** A method, not the field: `send` pauses the cursor behind the compiler's narrowing. */
  isPaused(): boolean {
    return this.paused;
  }

  /** Events were seen but not sent. */
  behind(): boolean {
    return this.seen > this.sent;
  }
}
