import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** A server that can stop gracefully: no new connections, in-flight requests finished, streams ended. */
export interface DrainableServer {
  /**
   * Stops accepting, ends open event streams (their clients reconnect elsewhere with Last-Event-ID),
   * waits for the other in-flight responses up to `deadlineMs`, then closes what is left.
   */
  drain(options: { deadlineMs: number }): Promise<void>;
}

/**
 * An event stream never finishes by itself. Its Content-Type tells it (readable here when any header
 * was set before writeHead, as the request id is), else the client asked for one (EventSource does).
 */
const isEventStream = (req: IncomingMessage, res: ServerResponse): boolean =>
  String(res.getHeader('content-type') ?? '').startsWith('text/event-stream') ||
  (req.headers.accept ?? '').includes('text/event-stream');

const ignoreWriteAfterEnd = (): void => undefined;

/** Tracks `server`'s open responses from now on, so that `drain` knows what it waits for. */
export function drainable(server: Server): DrainableServer {
  const open = new Map<ServerResponse, IncomingMessage>();
  let draining = false;
  let settled: (() => void) | undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // A request arriving on a kept-alive connection while draining is served, then the connection closes.
    if (draining && !res.headersSent) res.setHeader('Connection', 'close');
    open.set(res, req);
    res.once('close', () => {
      open.delete(res);
      if (draining && open.size === 0) settled?.();
    });
  });
  return {
    async drain({ deadlineMs }) {
      draining = true;
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeIdleConnections();
      for (const [res, req] of open) {
        if (!res.headersSent) res.setHeader('Connection', 'close');
        if (isEventStream(req, res) && res.headersSent) {
          // Its writer stops at the response's close, a tick after end(): a write in that tick is dropped.
          res.on('error', ignoreWriteAfterEnd);
          res.end();
        }
      }
      if (open.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (settled = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs))),
        ]);
        clearTimeout(timer);
      }
      server.closeAllConnections();
      await closed;
    },
  };
}
