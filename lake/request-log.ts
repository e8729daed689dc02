import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';
import type { Logger } from '../platform/log.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One JSON line per request with an id (the caller's sane `x-request-id`, else a new UUID), echoed
 * in the response. Only method, url and status are logged: headers hold the workload token and
 * bodies hold dataset credentials and queries.
 */
export function requestLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse): string {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    customLogLevel(req, res, err) {
      // 503 not_loaded and 504 timeout are the caller's situation, not a fault of the lake.
      if (err !== undefined || (res.statusCode >= 500 && res.statusCode < 503)) return 'error';
      if (res.statusCode >= 400) return 'warn';
      // The operator polls /healthz and /v1/status; at info they would drown everything else.
      return req.url === '/healthz' || req.url === '/v1/status' ? 'debug' : 'info';
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
