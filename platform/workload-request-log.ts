import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';
import type { Logger } from './log.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface WorkloadRequestLogOptions {
  /** Paths the operator polls on every reconcile: logged at debug, or they would drown everything else. */
  quietPaths: readonly string[];
  /** 5xx statuses that describe the caller's situation (a lake not loaded yet, a query timeout), not a fault: warn. */
  callerStatuses?: readonly number[];
}

/**
 * The request log of a server inside a workload (runner, lake server): one JSON line per request
 * with an id (the caller's sane `x-request-id`, else a new UUID), echoed in the response. Only
 * method, url and status are logged: headers hold the workload token, bodies hold prompts,
 * dataset credentials and queries.
 */
export function workloadRequestLog(logger: Logger, options: WorkloadRequestLogOptions): RequestHandler {
  const quiet = new Set(options.quietPaths);
  const callerStatuses = new Set(options.callerStatuses ?? []);
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse): string {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    customLogLevel(req, res, err) {
      if (err !== undefined || (res.statusCode >= 500 && !callerStatuses.has(res.statusCode))) return 'error';
      if (res.statusCode >= 400) return 'warn';
      return quiet.has(req.url ?? '') ? 'debug' : 'info';
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
