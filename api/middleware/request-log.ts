import type { IncomingMessage } from 'node:http';
import { pinoHttp } from 'pino-http';
import { assignRequestId, requestLogSerializers } from '../../platform/request-log.js';
import type { RequestHandler } from 'express';
import type { Logger } from '../../platform/log.js';
import { findPrincipal } from '../auth/principal.js';

/**
 * Gives every request an id (the client's `x-request-id` when it is sane, else a new UUID), echoes
 * it in the response header and logs one JSON line per request with it.
 */
export function requestLog(options: { logger: Logger }): RequestHandler {
  return pinoHttp({
    logger: options.logger,
    genReqId: assignRequestId,
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
    serializers: requestLogSerializers,
  });
}
