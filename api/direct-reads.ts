import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { RouteMatch, RouteTable } from './route-table.js';

/** A server's `upgrade` listener. */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * The API's HTTP handler: a server's `request` listener; `express` is the app behind it, and
 * `onUpgrade` the `upgrade` listener of the server that serves it (WebSockets to preview URLs).
 */
export type ApiRequestListener = ((req: IncomingMessage, res: ServerResponse) => void) & {
  express: Express;
  onUpgrade: UpgradeListener;
};

export interface DirectReadsOptions {
  app: Express;
  /** The API routes' table (mountRoutes): its `direct` routes are served here. */
  table: RouteTable;
  /**
   * The middleware Express runs for a direct route's requests before the route, in its order (the
   * app's other layers do nothing for them: other paths, or bodies a GET has not).
   */
  middleware: readonly RequestHandler[];
  /** What Express answers a failure with (the app's error handler). */
  onError: ErrorRequestHandler;
  /** Route templates whose answers vary by Accept (the web pages' negotiation sets `Vary` on them first). */
  variesByAccept: ReadonlySet<string>;
  /** Requests an earlier Express layer owns whatever their path (a preview host's): never served here. */
  ownedElsewhere?: (req: IncomingMessage) => boolean;
  /** The app's `upgrade` listener, handed on with it. */
  onUpgrade: UpgradeListener;
}

/** A browser may prefer the page to the JSON: only Express's negotiation decides that (web/pages.ts). */
const mayPreferHtml = (req: IncomingMessage): boolean => req.headers.accept?.includes('html') === true;

/** The path of a request URL, as Express's `req.path` (parseurl) gives it. */
function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/**
 * The GETs (and HEADs) of the cached reads (a task, a page of tasks: routes marked `direct`)
 * answered without Express's layer stack: a read of a task passed ~15 layers (the web pages'
 * routers among them) and Express's matching cost more CPU than the rest of the read. The same
 * middleware functions run in the same order (request id and log, metrics, the page negotiation's
 * `Vary`, the method check, authentication), then the route's own handler, and a failure goes to
 * the same error handler, so the answers are Express's own (test/integration/direct-reads.test.ts
 * compares them). Anything else, and any request a browser might want as a page, goes to Express.
 */
export function directReads(options: DirectReadsOptions): ApiRequestListener {
  const { app, table } = options;
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? '';
    const url = req.url ?? '';
    const match =
      (method === 'GET' || method === 'HEAD') && !mayPreferHtml(req)
        ? table.find(method, pathOf(url))
        : undefined;
    if (match?.direct !== true || options.ownedElsewhere?.(req) === true) {
      app(req, res);
      return;
    }
    serve(options, withExpress(app, req, res, url), match);
  };
  return Object.assign(listener, { express: app, onUpgrade: options.onUpgrade });
}

/**
 * The request and response as Express's app.handle and router make them before the first layer:
 * its prototypes (req.path, res.send…), the links between the two, the URL Express keeps.
 */
function withExpress(
  app: Express,
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
): { req: Request; res: Response } {
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  const request = req as Request; // sound: its prototype is Express's request now, as app.handle makes it
  const response = res as Response; // likewise
  request.res = response;
  response.req = request;
  response.locals = Object.create(null) as Record<string, unknown>;
  request.originalUrl = url;
  request.baseUrl = '';
  return { req: request, res: response };
}

/** Runs the middleware, then the route; a throw, rejection or `next(err)` goes to the error handler. */
function serve(
  options: DirectReadsOptions,
  { req, res }: { req: Request; res: Response },
  match: RouteMatch,
) {
  if (options.variesByAccept.has(match.template)) res.vary('Accept');
  const fail = (err: unknown): void => {
    options.onError(err, req, res, () => res.end());
  };
  let index = 0;
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined) {
      fail(err);
      return;
    }
    try {
      const middleware = options.middleware[index++];
      const pending = middleware === undefined ? route(req, res, match) : middleware(req, res, next);
      if (pending instanceof Promise) pending.catch(fail);
    } catch (thrown) {
      fail(thrown);
    }
  };
  next();
}

/** What the route table's dispatch does with a match. */
function route(req: Request, res: Response, match: RouteMatch): Promise<void> | undefined {
  req.params = match.params;
  req.route = match.route;
  return match.handler(req, res);
}
