import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type {} from 'pino-http'; // its typing of req.id and req.log, which this middleware sets
import { loggedUrl } from '../../platform/logged-url.js';
import { assignRequestId } from '../../platform/request-log.js';
import type { Logger } from '../../platform/log.js';
import { findPrincipal } from '../auth/principal.js';

/** Who called, for audit and debugging: organization and key id (a hash prefix), never the key. */
function callerOf(req: IncomingMessage): { org: string; keyId: string } | Record<string, never> {
  const principal = findPrincipal(req);
  return principal === undefined ? {} : { org: principal.organization.metadata.name, keyId: principal.keyId };
}

/**
 * Gives every request an id (the client's `x-request-id` when it is sane, else a new UUID), echoes
 * it in the response header and logs one JSON line per request with it: the line pino-http wrote
 * (`req` with id, method and url only — headers hold credentials —, `org`, `keyId`, `res.statusCode`,
 * `responseTime`), without its two child loggers and full request serialization per request, which
 * cost more CPU than the rest of a cached read. `req.log` (the request's own logger, `req` bound) is
 * made on first use: most requests never log anything else.
 */
export function requestLog(options: { logger: Logger }): RequestHandler {
  const { logger } = options;
  // The lines of requests that did not fail hold only the fields built here (the URL already
  // without credentials, loggedUrl), none of which the logger's redaction paths name: redacting
  // them found nothing and cost more than writing the line. A failure's line carries an error,
  // which the redacting logger writes.
  const completed = logger.child({}, { redact: { paths: [] } });
  return function logRequest(req: Request, res: Response, next: NextFunction): void {
    const started = Date.now();
    const id = assignRequestId(req, res);
    req.id = id;
    const reqFields = { id, method: req.method, url: loggedUrl(req.originalUrl) };
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (child ??= logger.child({ req: reqFields })),
      set: (given: Logger) => {
        child = given;
      },
    });
    const onEnd = (err?: Error): void => {
      res.off('close', onEnd);
      res.off('finish', onEnd);
      res.off('error', onEnd);
      const line = { req: reqFields, ...callerOf(req), res: { statusCode: res.statusCode } };
      const responseTime = Date.now() - started;
      if (err !== undefined || res.statusCode >= 500) {
        const error = err ?? new Error(`failed with status code ${String(res.statusCode)}`);
        logger.error({ ...line, err: error, responseTime }, 'request errored');
      } else {
        completed[res.statusCode >= 400 ? 'warn' : 'info']({ ...line, responseTime }, 'request completed');
      }
    };
    res.on('close', onEnd);
    res.on('finish', onEnd);
    res.on('error', onEnd);
    next();
  };
}
