import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createApiApp } from '../api/app.js';
import { parseDuration } from '../platform/duration.js';
import { answerClientErrors } from '../api/client-errors.js';
import { ReadModel } from '../api/read-model.js';
import {
  ConfigSchema,
  apiListenSettings,
  artifactLimitsOf,
  loadConfig,
  publicUrlOf,
} from '../platform/config.js';
import type { Config } from '../platform/config.js';
import { loadExecutorCatalog } from '../platform/executor-catalog.js';
import { ensureInstallationKey } from '../platform/installation-key.js';
import { notificationQueuesFromConfig } from '../platform/lake-notifications/queues.js';
import { listenOn } from '../platform/listen.js';
import { createLogger } from '../platform/log.js';
import { createMetricsRegistry } from '../platform/metrics.js';
import { downloadRedirectTarget } from '../platform/objectstore/download-redirect.js';
import { openObjectStore } from '../platform/objectstore/open.js';
import { openStore } from '../platform/store/open.js';
import { AGENTRY_VERSION } from '../platform/version.js';
import type { CliCommand } from './command.js';
import { settingsHelp } from './settings-help.js';

const USAGE = `usage: agentry api

The REST API server alone, beside \`agentry operator\`: in a cluster with AGENTRY_STORE=kubernetes
(the Helm chart's api Deployment). Serves /v1, the web pages, /healthz, /readyz and /metrics on AGENTRY_PORT.

${settingsHelp(ConfigSchema, [
  ['AGENTRY_PORT', 'port of the API (0: any free port)'],
  ['AGENTRY_HOST', 'address the API listens on'],
  ['AGENTRY_PUBLIC_URL', 'base URL clients reach the API at (default http://HOST:PORT)'],
  ['AGENTRY_STORE', 'embedded (AGENTRY_DATA_DIR) or kubernetes (KUBECONFIG or in cluster)'],
  ['AGENTRY_NAMESPACE', 'the control namespace: API keys and signing keys'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
  ['AGENTRY_OBJECT_STORE', 'where uploaded files live: filesystem or s3 (AGENTRY_S3_*)'],
  ['AGENTRY_EXECUTORS_FILE', 'executor definitions (YAML or JSON) added to the built-ins'],
  ['AGENTRY_WEBHOOK_PRIVATE_TARGETS', 'whether webhooks may target private and loopback addresses'],
  ['AGENTRY_UI_SESSION_TTL', 'how long a web-page sign-in lasts (a duration)'],
])}  More settings (S3, SQS, limits): docs/configuration.md#settings.

example:
  AGENTRY_STORE=kubernetes AGENTRY_HOST=0.0.0.0 agentry api
`;

/** `agentry api` as a command: no arguments; runs until SIGINT or SIGTERM. */
export const apiCommand: CliCommand = {
  usage: () => USAGE,
  run: async (args) => {
    parseArgs({ args, options: {} });
    return runApiCommand(loadConfig());
  },
};

/** `agentry api`: the REST API server alone, on the configured store (a cluster, in production). */
export async function runApiCommand(config: Config): Promise<number> {
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-api' });
  const store = await openStore(config);
  const installationKey = await ensureInstallationKey(store, config.AGENTRY_NAMESPACE);
  const executors = await loadExecutorCatalog(config.AGENTRY_EXECUTORS_FILE);
  const readModel = new ReadModel(store, { controlNamespace: config.AGENTRY_NAMESPACE, logger });
  const notificationQueues = notificationQueuesFromConfig(config);
  const objectStore = openObjectStore(config, { installationKey, publicUrl: publicUrlOf(config) });
  let ready = false;
  const app = createApiApp({
    store,
    readModel,
    logger,
    metrics: createMetricsRegistry(),
    controlNamespace: config.AGENTRY_NAMESPACE,
    installationKey,
    executors,
    allowPrivateWebhookTargets: config.AGENTRY_WEBHOOK_PRIVATE_TARGETS === 'true',
    objectStore,
    publicUrl: publicUrlOf(config),
    version: AGENTRY_VERSION,
    isReady: () => ready,
    lakeConnectors: new Set(config.AGENTRY_LAKE_CONNECTORS),
    lakeFileRoots: () => config.AGENTRY_LAKE_FILE_ROOTS,
    lakeMaxResultBytes: config.AGENTRY_LAKE_MAX_RESULT_BYTES,
    artifactLimits: artifactLimitsOf(config),
    artifactDownloadRedirect: downloadRedirectTarget(config, objectStore),
    lakeSqlTimeoutMs: parseDuration(config.AGENTRY_LAKE_SQL_TIMEOUT),
    uiSessionTtlMs: parseDuration(config.AGENTRY_UI_SESSION_TTL),
    ...(notificationQueues === undefined ? {} : { notificationQueues }),
  });
  const server = createServer(app);
  answerClientErrors(server);
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await listenOn(server, apiListenSettings(config));
  await readModel.start();
  ready = true;
  logger.info({ url: publicUrlOf(config) }, 'api serving');
  await stopRequested;
  ready = false;
  const closed = new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  server.closeIdleConnections();
  await closed;
  await readModel.stop();
  notificationQueues?.close();
  await store.close();
  return 0;
}
