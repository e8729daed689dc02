import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Config } from '../platform/config.js';
import { listenOn } from '../platform/listen.js';

/**
 * The second port of a control-plane program (operator, egress proxy): /metrics, /healthz (the
 * process answers) and /readyz (it has started: caches filled, leadership campaigned).
 */
export function healthServer(registry: Registry, isReady: () => boolean): Server {
  return createServer((req, res) => {
    void (async () => {
      if (req.url === '/metrics') {
        res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
      } else if (req.url === '/healthz' || req.url === '/readyz') {
        const ok = req.url === '/healthz' || isReady();
        res
          .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: ok ? 'ok' : 'starting' }));
      } else res.writeHead(404).end();
    })();
  });
}

/** healthServer listening on AGENTRY_HOST:AGENTRY_METRICS_PORT. */
export async function startHealthServer(
  config: Config,
  registry: Registry,
  isReady: () => boolean,
): Promise<Server> {
  const health = healthServer(registry, isReady);
  await listenOn(health, {
    host: config.AGENTRY_HOST,
    port: config.AGENTRY_METRICS_PORT,
    hostSetting: 'AGENTRY_HOST',
    portSetting: 'AGENTRY_METRICS_PORT',
  });
  return health;
}
