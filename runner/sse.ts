import type { Response } from 'express';
import type { Logger } from '../platform/log.js';
import type { TaskEvent } from '../platform/runner-protocol.js';
import type { EventFilter, TaskEventLog } from './event-log.js';

export const DEFAULT_KEEPALIVE_MS = 15_000;
/** Live events a stream may hold unread beyond its replay before it is cut (memory stays bounded). */
const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

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
 */
export async function streamTaskEvents(res: Response, options: StreamOptions): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();

  const client = { gone: false, replayBytes: 0 };
  let unfollow: (() => void) | undefined;
  const write = (text: string): void => {
    if (!res.writableEnded && !res.destroyed) res.write(text);
  };
  const keepalive = setInterval(() => {
    write(': keepalive\n\n');
  }, options.keepaliveMs);
  const cleanUp = (): void => {
    client.gone = true;
    clearInterval(keepalive);
    unfollow?.();
  };
  // The response's close, not the request's: since Node 16 a request closes once its body is read.
  res.once('close', cleanUp);

  try {
    unfollow = await options.events.follow(options.taskId, options.filter, {
      onEvent: (event) => {
        const frame = sseFrame(event);
        write(frame);
        // follow() replays before it returns: until then, this is the replay.
        if (unfollow === undefined) client.replayBytes += Buffer.byteLength(frame);
        else if (res.writableLength > client.replayBytes + MAX_UNREAD_BYTES) {
          // A client this far behind resumes from its Last-Event-ID; the runner keeps no backlog for it.
          options.logger.warn({ taskId: options.taskId }, 'an event stream fell behind; cutting it');
          res.destroy();
        }
      },
      onEnd: () => {
        cleanUp();
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
