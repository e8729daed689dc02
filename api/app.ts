import express from 'express';
import type { Express } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../platform/log.js';
import type { ResourceStore } from '../platform/store/types.js';
import { authenticate } from './auth/authenticate.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { jsonBody } from './middleware/json-body.js';
import { requestLog } from './middleware/request-log.js';
import { openApiDocument } from './openapi.js';
import type { ReadModel } from './read-model.js';
import { mountRoutes } from './route.js';
import type { RouteDefinition } from './route.js';
import { agentComputerRoutes } from './routes/agent-computers.js';

export interface ApiAppOptions {
  store: ResourceStore;
  readModel: ReadModel;
  logger: Logger;
  metrics: Registry;
  /** Namespace holding API keys. */
  controlNamespace: string;
  /** Base URL clients reach this server at (no trailing slash, no /v1). */
  publicUrl: string;
  version: string;
  /** Whether the caches are synced and the server can answer reads. */
  isReady: () => boolean;
  now?: () => Date;
}

export function apiRoutes(
  options: Pick<ApiAppOptions, 'store' | 'readModel' | 'publicUrl'>,
): RouteDefinition[] {
  return [...agentComputerRoutes(options)];
}

/** The Express application of the public API: middleware order is the contract's order of checks. */
export function createApiApp(options: ApiAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const routes = apiRoutes(options);
  const openApi = openApiDocument(routes, { version: options.version, serverUrl: options.publicUrl });

  app.use(requestLog({ logger: options.logger }));
  app.use(httpMetrics({ registry: options.metrics }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const ready = options.isReady();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'starting' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(options.metrics.contentType).send(await options.metrics.metrics());
  });
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApi);
  });

  const v1 = express.Router();
  v1.use(
    '/v1',
    authenticate({
      readModel: options.readModel,
      controlNamespace: options.controlNamespace,
      now: options.now,
    }),
    jsonBody({ limit: '1mb' }),
  );
  mountRoutes(v1, routes);
  app.use(v1);

  app.use(notFoundHandler);
  app.use(errorHandler());
  return app;
}
