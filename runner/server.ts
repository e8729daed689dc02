import { createServer } from 'node:http';
import type { Server } from 'node:http';
import express from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '../platform/log.js';
import { requireToken } from './auth.js';
import { requestLog } from './request-log.js';
import type { RunnerState } from './state.js';

export interface RunnerAppOptions {
  token: string;
  logger: Logger;
  state: RunnerState;
  version: string;
  /** Absolute path of the directory agents work in (`/code` in a VM or pod). */
  workdir: string;
  now?: () => Date;
}

const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** The runner's HTTP API. Every route, /healthz included, sits behind the workload token. */
export function createRunnerApp(options: RunnerAppOptions): Express {
  const now = options.now ?? (() => new Date());
  const app = express();
  app.disable('x-powered-by');
  app.use(requestLog(options.logger));
  app.use(requireToken(options.token));

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
      workdir: options.workdir,
    });
  });

  app.use((req: Request, res: Response) => {
    res.status(404).json(errorBody('not_found', `No route for ${req.method} ${req.path}`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    req.log.error({ err, reqId: req.id }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(500).json(errorBody('internal_error', 'Internal server error'));
  });
  return app;
}

export interface RunningRunner {
  server: Server;
  /** `http://HOST:PORT` with the port actually bound (AGENTRY_RUNNER_PORT=0 picks one). */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** An IPv6 literal needs brackets inside a URL. */
const hostInUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/**
 * Listens with the app. `stop()` lets requests in flight finish, then cuts whatever is still open
 * after `closeGraceMs` (a long-lived stream must not hold a SIGTERM hostage).
 */
export async function listenRunner(
  app: Express,
  options: { host: string; port: number; closeGraceMs?: number },
): Promise<RunningRunner> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => {
      reject(new Error(`runner cannot listen on ${options.host}:${options.port}`, { cause: err }));
    });
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
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
