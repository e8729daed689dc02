import { createServer } from 'node:http';
import { join } from 'node:path';
import type { Server } from 'node:http';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import { writeEventMarks } from '../platform/event-trace.js';
import type { Logger } from '../platform/log.js';
import { ArtifactBaseFile } from './artifacts/base.js';
import { ArtifactManifest } from './artifacts/manifest.js';
import { TaskEventLog } from './event-log.js';
import { runExecutor as realRunExecutor } from './executors/run.js';
import type { RunExecutor } from './executors/types.js';
import { PromptQueue } from './prompt-queue.js';
import { PromptRecordStore } from './prompt-records.js';
import { hostInUrl, listenOn } from '../platform/listen.js';
import { requireWorkloadToken } from '../platform/workload-auth.js';
import { workloadRequestLog } from '../platform/workload-request-log.js';
import { artifactRoutes } from './routes/artifacts.js';
import { taskRoutes } from './routes/tasks.js';
import { DEFAULT_KEEPALIVE_MS } from './sse.js';
import { listeningPorts } from './listening-ports.js';
import { RUNNER_KEEP_ALIVE_MS } from '../platform/runner-protocol.js';
import type { ListeningPorts } from '../platform/runner-protocol.js';
import type { RunnerState } from './state.js';

export interface RunnerAppOptions {
  token: string;
  logger: Logger;
  state: RunnerState;
  version: string;
  /** Absolute path of the directory agents work in (`/code` in a VM or pod). */
  workdir: string;
  /** The working directory as events name it (docs/runtimes.md: `/code` in every runtime). */
  shownWorkdir?: string;
  /** Absolute path of the runner's own state (event logs, prompt records) on the workspace disk. */
  stateDir: string;
  /** Runs a prompt with its executor; the real one unless a test says otherwise. */
  runExecutor?: RunExecutor;
  /** How often an SSE stream sends `: keepalive` (15 s). */
  keepaliveMs?: number;
  /** Preparing the workspace for a prompt (clone, downloads) fails after this long (30 min). */
  prepTimeoutMs?: number;
  /** How long the model gateway has to answer a prompt's metered usage (5 s). */
  meteredUsageTimeoutMs?: number;
  now?: () => Date;
}

/** The runner's HTTP app and the task engine behind it. */
export interface RunnerApp {
  app: Express;
  queue: PromptQueue;
  events: TaskEventLog;
  /** Recovers prompts left on disk by a previous run and starts the queue: call before listening. */
  start(): Promise<void>;
  /**
   * Aborts the running prompt (recorded failed: the workspace stopped), leaves pending ones on
   * disk, ends event streams and closes the logs. Call before the server stops.
   */
  shutdown(): Promise<void>;
}

const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** body-parser's errors carry a `type`; those are the client's fault, not ours. */
function clientError(err: unknown): { status: number; code: string; message: string } | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  if (err.type === 'entity.too.large')
    return { status: 413, code: 'payload_too_large', message: 'The request body is too large' };
  if (err.type === 'entity.parse.failed')
    return { status: 400, code: 'validation_error', message: 'The request body is not valid JSON' };
  return undefined;
}

/** The runner's HTTP API. Every route, /healthz included, sits behind the workload token. */
export function createRunnerApp(options: RunnerAppOptions): RunnerApp {
  const now = options.now ?? (() => new Date());
  const { logger, stateDir, workdir } = options;
  const events = new TaskEventLog({ stateDir, logger, now });
  const queue = new PromptQueue({
    events,
    records: new PromptRecordStore(stateDir, logger),
    runExecutor: options.runExecutor ?? realRunExecutor,
    state: options.state,
    workdir,
    shownWorkdir: options.shownWorkdir ?? workdir,
    stateDir,
    logger,
    now,
    prepTimeoutMs: options.prepTimeoutMs,
    meteredUsageTimeoutMs: options.meteredUsageTimeoutMs,
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(workloadRequestLog(logger, { quietPaths: ['/healthz'] }));
  // The workload token on every request, /healthz included: the runner trusts no network.
  app.use(requireWorkloadToken(options.token, { realm: 'agentry-runner' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/v1/status', (_req, res) => {
    const { state } = options;
    res.json({
      version: options.version,
      startedAt: state.startedAt.toISOString(),
      uptimeSeconds: Math.max(0, Math.floor((now().getTime() - state.startedAt.getTime()) / 1000)),
      state: state.activity,
      workdir,
      queueLength: queue.pendingCount,
      runningPromptId: queue.runningPromptId ?? null,
    });
  });
  app.get('/v1/ports', (_req, res, next) => {
    listeningPorts().then((ports) => res.json({ ports } satisfies ListeningPorts), next);
  });
  app.use(taskRoutes({ queue, events, logger, keepaliveMs: options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS }));
  app.use(
    artifactRoutes({
      workdir,
      manifest: new ArtifactManifest(workdir, stateDir, logger),
      base: new ArtifactBaseFile(stateDir, logger),
      logger,
    }),
  );

  app.use((req: Request, res: Response) => {
    res.status(404).json(errorBody('not_found', `No route for ${req.method} ${req.path}`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = clientError(err);
    if (known !== undefined && !res.headersSent) {
      res.status(known.status).json(errorBody(known.code, known.message));
      return;
    }
    req.log.error({ err, reqId: req.id }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(500).json(errorBody('internal_error', 'Internal server error'));
  });
  let stopTrace: (() => Promise<void>) | undefined;
  return {
    app,
    queue,
    events,
    start: () => {
      // Bench-only (AGENTRY_EVENT_TRACE=1): where each event was when, for bench/task-latency.
      stopTrace = writeEventMarks(join(stateDir, 'event-trace.tsv'));
      return queue.start();
    },
    async shutdown() {
      await queue.shutdown();
      await events.close();
      await stopTrace?.();
    },
  };
}

export interface RunningRunner {
  server: Server;
  /** `http://HOST:PORT` with the port actually bound (AGENTRY_RUNNER_PORT=0 picks one). */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Listens with the app. `stop()` lets requests in flight finish, then cuts whatever is still open
 * after `closeGraceMs` (a long-lived stream must not hold a SIGTERM hostage).
 */
export async function listenRunner(
  app: Express,
  options: { host: string; port: number; closeGraceMs?: number },
): Promise<RunningRunner> {
  const server = createServer(app);
  server.keepAliveTimeout = RUNNER_KEEP_ALIVE_MS;
  const port = await listenOn(server, {
    host: options.host,
    port: options.port,
    portSetting: 'AGENTRY_RUNNER_PORT',
    hostSetting: 'AGENTRY_RUNNER_HOST',
  });
  return {
    server,
    port,
    url: `http://${hostInUrl(options.host)}:${port}`,
    async stop() {
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeIdleConnections(); // keep-alive sockets would hold close() open for seconds
      const cutOff = setTimeout(() => {
        server.closeAllConnections();
      }, options.closeGraceMs ?? 5000); // within the process runtime's 10 s before SIGKILL
      cutOff.unref();
      await closed;
      clearTimeout(cutOff);
    },
  };
}
