import { pinoHttp } from 'pino-http';
import { assignRequestId, requestLogSerializers } from './request-log.js';
import type { RequestHandler } from 'express';
import type { Logger } from './log.js';

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
    genReqId: assignRequestId,
    customLogLevel(req, res, err) {
      if (err !== undefined || (res.statusCode >= 500 && !callerStatuses.has(res.statusCode))) return 'error';
      if (res.statusCode >= 400) return 'warn';
      return quiet.has(req.url ?? '') ? 'debug' : 'info';
    },
    serializers: requestLogSerializers,
  });
}
