import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createApiApp } from '../api/app.js';
import { ReadModel } from '../api/read-model.js';
import { publicUrlOf } from '../platform/config.js';
import type { Config } from '../platform/config.js';
import { createLogger } from '../platform/log.js';
import { createMetricsRegistry } from '../platform/metrics.js';
import { openStore } from '../platform/store/open.js';
import { AGENTRY_VERSION } from '../platform/version.js';
import { ensureBootstrapKey, ensureDefaultOrganization } from './bootstrap.js';

export interface RunningServer {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/** `agentry serve`: the API server (the operator joins in a later issue) on the configured store. */
export async function serve(config: Config, announce: (line: string) => void): Promise<RunningServer> {
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL });
  const store = await openStore(config);
  await ensureDefaultOrganization(store);
  const newKey = await ensureBootstrapKey(store, config.AGENTRY_NAMESPACE, config.AGENTRY_API_KEY);

  const readModel = new ReadModel(store, { controlNamespace: config.AGENTRY_NAMESPACE, logger });
  let ready = false;
  const app = createApiApp({
    store,
    readModel,
    logger,
    metrics: createMetricsRegistry(),
    controlNamespace: config.AGENTRY_NAMESPACE,
    publicUrl: publicUrlOf(config),
    version: AGENTRY_VERSION,
    isReady: () => ready,
  });
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.AGENTRY_PORT, config.AGENTRY_HOST, resolve);
  });
  await readModel.start();
  ready = true;

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.AGENTRY_PORT;
  const url = `http://${config.AGENTRY_HOST}:${port}`;
  logger.info({ url, dataDir: config.AGENTRY_DATA_DIR }, 'agentry is serving');
  if (newKey !== undefined) {
    announce(`API key of organization "default" (shown once, stored only as a hash):\n\n  ${newKey}\n`);
  }
  // Last, so whoever waits for this line has seen everything above it.
  announce(`Agentry ${AGENTRY_VERSION} is serving at ${url}/v1 (data in ${config.AGENTRY_DATA_DIR})`);
  return {
    server,
    url,
    async stop() {
      ready = false;
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeIdleConnections(); // keep-alive sockets would hold close() open for seconds
      await closed;
      await readModel.stop();
      await store.close();
    },
  };
}
