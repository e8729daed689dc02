import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import {
  LakeConfigRequestSchema,
  RefreshRequestSchema,
  SqlRequestSchema,
} from '../platform/lake-protocol.js';
import { settleWithin } from '../platform/deadline.js';
import { createLogger } from '../platform/log.js';
import type { Logger } from '../platform/log.js';
import { hostInUrl, listenOn } from '../platform/listen.js';
import { requireWorkloadToken } from '../platform/workload-auth.js';
import type { LakeServerConfig } from './config.js';
import { Catalog } from './catalog.js';
import { LakeEngine } from './engine.js';
import { LakeError, errorBody } from './errors.js';
import { Lake } from './lake.js';
import { workloadRequestLog } from '../platform/workload-request-log.js';
import { QueryAdmission, admissionLimits } from './query-admission.js';
import { writeResult } from './result-body.js';
import { runQuery } from './sql.js';
import { prepareDataSchema } from './tables.js';
import { waitForObjects } from './wait-for.js';

/** The lake server's HTTP API (platform/lake-protocol.ts); every route sits behind the workload token. */

export interface LakeAppOptions {
  token: string;
  lake: Lake;
  engine: LakeEngine;
  logger: Logger;
  rowLimit: number;
  queryTimeoutMs: number;
  /** AGENTRY_LAKE_MAX_RESULT_BYTES: a request may ask for less, never for more. */
  maxResultBytes: number;
  /** AGENTRY_LAKE_MAX_CONCURRENT_QUERIES and its queue (lake/query-admission.ts). */
  admission: QueryAdmission;
}

/** Parses a body with the protocol's schema; a 400 names each problem (paths, never values). */
function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
  throw new LakeError('bad_request', `invalid request: ${problems.slice(0, 10).join('; ')}`);
}

/** body-parser's errors carry a `type`; those are the client's fault, not ours. */
function bodyError(err: unknown): { status: number; message: string } | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  if (err.type === 'entity.too.large') return { status: 413, message: 'The request body is too large' };
  if (err.type === 'entity.parse.failed')
    return { status: 400, message: 'The request body is not valid JSON' };
  return undefined;
}

/** How long an interrupted query may take to stop before the caller is answered anyway. */
const INTERRUPT_GRACE_MS = 5_000;

/** Interrupts the query when the caller hangs up before the answer is sent. */
function callerGone(res: Response): AbortSignal {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/** POST /v1/sql: waits for the objects it names, takes a query slot, answers within its timeout. */
function answerSql(options: LakeAppOptions): (req: Request, res: Response) => Promise<void> {
  const { lake, engine } = options;
  return async (req, res) => {
    const request = parseBody(SqlRequestSchema, req.body);
    if (!lake.configured) throw new LakeError('not_loaded', 'The lake has no configuration yet');
    lake.noteQuery();
    if (request.waitFor !== undefined) await waitForObjects(lake, request.waitFor, request.waitTimeoutMs);
    const timeoutMs = request.timeoutMs ?? options.queryTimeoutMs;
    const release = await options.admission.admit(timeoutMs, callerGone(res));
    const query = runQuery(engine, request.query, {
      rowLimit: request.rowLimit ?? options.rowLimit,
      maxResultBytes: Math.min(request.maxResultBytes ?? options.maxResultBytes, options.maxResultBytes),
      timeoutMs,
      signal: callerGone(res),
      freshness: (datasets) => lake.dataAsOf(datasets),
    });
    void query.then(release, release);
    // A DuckDB operation that does not heed the interrupt must not hold the caller (and the API
    // server behind it) forever: past the timeout and a grace period, 504 while it winds down.
    const result = await settleWithin(query, AbortSignal.timeout(timeoutMs + INTERRUPT_GRACE_MS), () => {
      req.log.warn({ timeoutMs }, 'a query did not stop when interrupted; answering 504 while it winds down');
      return new LakeError('timeout', `the query ran longer than ${timeoutMs} ms and was stopped`);
    });
    writeResult(res, result);
  };
}

function noRoute(req: Request, res: Response): void {
  res.status(404).json(errorBody('not_found', `No route for ${req.method} ${req.path}`));
}

/** Every error in the protocol's JSON shape; only what is neither the lake's nor the caller's is logged. */
function sendError(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof LakeError) {
    res.status(err.status).json(errorBody(err.code, err.message));
    return;
  }
  const known = bodyError(err);
  if (known !== undefined) {
    res.status(known.status).json(errorBody('bad_request', known.message));
    return;
  }
  req.log.error({ err, reqId: req.id }, 'request failed');
  res.status(500).json(errorBody('internal_error', 'Internal server error'));
}

export function createLakeApp(options: LakeAppOptions): Express {
  const { lake } = options;
  const app = express();
  app.disable('x-powered-by');
  // 503 not_loaded and 504 timeout are the caller's situation, not a fault of the lake.
  app.use(
    workloadRequestLog(options.logger, {
      quietPaths: ['/healthz', '/v1/status'],
      callerStatuses: [503, 504],
    }),
  );
  app.use(requireWorkloadToken(options.token, { realm: 'agentry-lake' }));
  // Configs of 500 datasets and queries of up to a million characters.
  app.use(express.json({ limit: '4mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/v1/status', (_req, res) => {
    res.json({ ...lake.status(), queries: options.admission.counts() });
  });
  app.put('/v1/config', (req, res) => {
    const request = parseBody(LakeConfigRequestSchema, req.body);
    res.status(202).json(lake.applyConfig(request.generation, request.config, request.revision));
  });
  app.post('/v1/refresh', (req, res) => {
    const request = parseBody(RefreshRequestSchema, req.body);
    res.status(202).json({ accepted: lake.refresh(request.datasets, request.mode, request.changes) });
  });
  app.post('/v1/sql', answerSql(options));

  app.use(noRoute);
  app.use(sendError);
  return app;
}

export interface RunningLake {
  server: Server;
  /** `http://HOST:PORT` with the port actually bound (AGENTRY_LAKE_PORT=0 picks one). */
  url: string;
  port: number;
  lake: Lake;
  /** Stops taking requests, lets those in flight finish (cut after a grace period), stops loading, closes DuckDB. */
  stop(): Promise<void>;
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((done) => {
    server.close(() => {
      done();
    });
  });
  server.closeIdleConnections(); // keep-alive sockets would hold close() open for seconds
  const cutOff = setTimeout(() => {
    server.closeAllConnections();
  }, graceMs);
  cutOff.unref();
  return closed.finally(() => {
    clearTimeout(cutOff);
  });
}

/** DuckDB on the data directory (locked down), with the data schema ready and the catalog read. */
async function openDatabase(config: LakeServerConfig): Promise<{ engine: LakeEngine; catalog: Catalog }> {
  const engine = await LakeEngine.open({
    dataDir: resolve(config.AGENTRY_LAKE_DATA_DIR),
    memoryLimit: config.AGENTRY_LAKE_MEMORY_LIMIT,
    threads: config.AGENTRY_LAKE_THREADS,
    spillLimit: config.AGENTRY_LAKE_SPILL_LIMIT,
  });
  try {
    await prepareDataSchema(engine);
    return { engine, catalog: await Catalog.open(engine) };
  } catch (err) {
    await engine.close();
    throw err;
  }
}

/** The HTTP API's settings from the server's configuration. */
function appOptions(
  config: LakeServerConfig,
  lake: Lake,
  engine: LakeEngine,
  logger: Logger,
): LakeAppOptions {
  return {
    token: config.AGENTRY_LAKE_TOKEN,
    lake,
    engine,
    logger,
    rowLimit: config.AGENTRY_LAKE_ROW_LIMIT,
    queryTimeoutMs: config.AGENTRY_LAKE_QUERY_TIMEOUT,
    maxResultBytes: config.AGENTRY_LAKE_MAX_RESULT_BYTES,
    admission: new QueryAdmission(
      admissionLimits(config.AGENTRY_LAKE_MAX_CONCURRENT_QUERIES, config.AGENTRY_LAKE_THREADS),
    ),
  };
}

/**
 * Starts the lake server from its parsed configuration: DuckDB (its file, locked down), what the
 * file holds (the catalog), the loader and the HTTP API. Used by `agentry lake` and by tests in process.
 */
export async function startLakeServer(
  config: LakeServerConfig,
  options: { logger?: Logger; closeGraceMs?: number } = {},
): Promise<RunningLake> {
  const logger = options.logger ?? createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-lake' });
  const { engine, catalog } = await openDatabase(config);
  const lake = new Lake({
    engine,
    catalog,
    connectors: config.AGENTRY_LAKE_CONNECTORS,
    sources: {
      fileRoots: config.AGENTRY_LAKE_FILE_ROOTS,
      outbound: { allowPrivate: config.AGENTRY_LAKE_PRIVATE_TARGETS },
    },
    logger,
  });
  const server = createServer(createLakeApp(appOptions(config, lake, engine, logger)));
  let port: number;
  try {
    port = await listenOn(server, {
      host: config.AGENTRY_LAKE_HOST,
      port: config.AGENTRY_LAKE_PORT,
      portSetting: 'AGENTRY_LAKE_PORT',
      hostSetting: 'AGENTRY_LAKE_HOST',
    });
  } catch (err) {
    await engine.close();
    throw err;
  }
  return {
    server,
    port,
    url: `http://${hostInUrl(config.AGENTRY_LAKE_HOST)}:${port}`,
    lake,
    async stop() {
      await closeServer(server, options.closeGraceMs ?? 5000);
      await lake.close();
      await engine.close();
    },
  };
}
