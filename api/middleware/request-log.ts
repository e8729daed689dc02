import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';
import type { Logger } from '../../platform/log.js';
import { findPrincipal } from '../auth/principal.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the client's `x-request-id` when it is sane, else a new UUID), echoes
 * it in the response header and logs one JSON line per request with it.
 */
export function requestLog(options: { logger: Logger }): RequestHandler {
  return pinoHttp({
    logger: options.logger,
    genReqId(req: IncomingMessage, res: ServerResponse): string {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    // Who called, for audit and debugging: organization and key id (a hash prefix), never the key.
    customProps(req: IncomingMessage) {
      const principal = findPrincipal(req);
      return principal === undefined
        ? {}
        : { org: principal.organization.metadata.name, keyId: principal.keyId };
    },
    customLogLevel(_req, res, err) {
      if (err !== undefined || res.statusCode >= 500) return 'error';
      return res.statusCode >= 400 ? 'warn' : 'info';
    },
    serializers: {
      req: (req: { id: unknown; method: unknown; url: unknown }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
      }),
      res: (res: { statusCode: unknown }) => ({ statusCode: res.statusCode }),
    },
  });
}
