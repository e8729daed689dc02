import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createApiApp } from '../api/app.js';
import { WorkspacePoolReservations } from '../api/workspace-pool/reservations.js';
import { parseDuration } from '../platform/duration.js';
import { answerClientErrors } from '../api/client-errors.js';
import { ReadModel } from '../api/read-model.js';
import {
  ConfigError,
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
import type { Logger } from '../platform/log.js';
import { usableCpus } from '../platform/cpu-quota.js';
import { drainable } from '../platform/http-drain.js';
import { createMetricsRegistry, withDefaultMetrics } from '../platform/metrics.js';
import { downloadRedirectTarget } from '../platform/objectstore/download-redirect.js';
import { openObjectStore } from '../platform/objectstore/open.js';
import { openStore } from '../platform/store/open.js';
import { AGENTRY_VERSION } from '../platform/version.js';
import { runApiPrimary } from './api-primary.js';
import { ClusterWideRegistry } from './cluster-metrics.js';
import type { CliCommand } from './command.js';
import { settingsHelp } from './settings-help.js';
import { modelGatewaySettingsOf } from './model-gateway-settings.js';

const USAGE = `usage: agentry api

The REST API server alone, beside \`agentry operator\`: in a cluster with AGENTRY_STORE=kubernetes
(the Helm chart's api Deployment). Serves /v1, the web pages, /healthz, /readyz and /metrics on
AGENTRY_PORT. With AGENTRY_API_WORKERS above 1 (or auto: the CPUs the container may use), a primary
process forks that many workers on the same port, replaces one that dies, and serves one /metrics
for all.

${settingsHelp(ConfigSchema, [
  ['AGENTRY_PORT', 'port of the API (0: any free port)'],
  ['AGENTRY_HOST', 'address the API listens on'],
  ['AGENTRY_PUBLIC_URL', 'base URL clients reach the API at (default http://HOST:PORT)'],
  ['AGENTRY_STORE', 'embedded (AGENTRY_DATA_DIR) or kubernetes (KUBECONFIG or in cluster)'],
  ['AGENTRY_API_WORKERS', 'processes serving the port (kubernetes store): a number, or auto'],
  ['AGENTRY_NAMESPACE', 'the control namespace: API keys and signing keys'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
  ['AGENTRY_OBJECT_STORE', 'where uploaded files live: filesystem or s3 (AGENTRY_S3_*)'],
  ['AGENTRY_EXECUTORS_FILE', 'executor definitions (YAML or JSON) added to the built-ins'],
  ['AGENTRY_WEBHOOK_PRIVATE_TARGETS', 'whether webhooks may target private and loopback addresses'],
  ['AGENTRY_UI_SESSION_TTL', 'how long a web-page sign-in lasts (a duration)'],
  ['AGENTRY_PREVIEW_DOMAIN', 'preview URLs at https://<token>.<domain>/ (wildcard DNS and TLS)'],
  ['AGENTRY_MODEL_GATEWAY', 'enabled or disabled: the model gateway at /model-gateway'],
  ['AGENTRY_MODEL_UPSTREAMS', 'where the model gateway forwards, JSON provider → URL'],
  ['AGENTRY_MODEL_PRICES_FILE', 'the model price table (YAML or JSON)'],
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

/** Long enough for a request in flight; shorter than the chart's 30 s terminationGracePeriodSeconds. */
const DRAIN_DEADLINE_MS = 25_000;

/** `agentry api`: the REST API server alone, on the configured store (a cluster, in production). */
export async function runApiCommand(config: Config): Promise<number> {
  const workers = config.AGENTRY_API_WORKERS === 'auto' ? usableCpus() : config.AGENTRY_API_WORKERS;
  if (workers > 1 && config.AGENTRY_STORE !== 'kubernetes')
    throw new ConfigError(
      'AGENTRY_API_WORKERS above 1 needs AGENTRY_STORE=kubernetes: the embedded store lives in one process',
    );
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-api' });
  if (workers > 1 && cluster.isPrimary) return runApiPrimary({ workers, logger });
  const worker = cluster.worker;
  return runApiProcess(
    config,
    worker === undefined ? { logger } : { logger: logger.child({ worker: worker.id }), worker: true },
  );
}

/** The API server of this process, not yet listening; `ready` says what /readyz answers. */
async function openApiServer(config: Config, logger: Logger) {
  // HTTP/2: a claim and its task, written at once, share one connection (KubernetesStoreOptions.http2).
  const store = await openStore(config, undefined, { http2: true });
  const installationKey = await ensureInstallationKey(store, config.AGENTRY_NAMESPACE);
  const executors = await loadExecutorCatalog(config.AGENTRY_EXECUTORS_FILE);
  const readModel = new ReadModel(store, { controlNamespace: config.AGENTRY_NAMESPACE, logger });
  const notificationQueues = notificationQueuesFromConfig(config);
  const objectStore = openObjectStore(config, { installationKey, publicUrl: publicUrlOf(config) });
  const state = { ready: false };
  // A worker's /metrics answers for every worker (cluster-metrics.ts).
  const metrics = cluster.isWorker ? withDefaultMetrics(new ClusterWideRegistry()) : createMetricsRegistry();
  const poolReservations = new WorkspacePoolReservations({
    store,
    readModel,
    logger,
    metrics,
    installationKey,
    now: () => new Date(),
  });
  const app = createApiApp({
    store,
    readModel,
    logger,
    metrics,
    controlNamespace: config.AGENTRY_NAMESPACE,
    installationKey,
    executors,
    allowPrivateWebhookTargets: config.AGENTRY_WEBHOOK_PRIVATE_TARGETS === 'true',
    objectStore,
    publicUrl: publicUrlOf(config),
    version: AGENTRY_VERSION,
    isReady: () => state.ready,
    lakeConnectors: new Set(config.AGENTRY_LAKE_CONNECTORS),
    lakeFileRoots: () => config.AGENTRY_LAKE_FILE_ROOTS,
    lakeMaxResultBytes: config.AGENTRY_LAKE_MAX_RESULT_BYTES,
    artifactLimits: artifactLimitsOf(config),
    artifactDownloadRedirect: downloadRedirectTarget(config, objectStore),
    lakeSqlTimeoutMs: parseDuration(config.AGENTRY_LAKE_SQL_TIMEOUT),
    uiSessionTtlMs: parseDuration(config.AGENTRY_UI_SESSION_TTL),
    previewDomain: config.AGENTRY_PREVIEW_DOMAIN,
    previewWakeTimeoutMs: parseDuration(config.AGENTRY_PREVIEW_WAKE_TIMEOUT),
    ...(notificationQueues === undefined ? {} : { notificationQueues }),
    modelGateway: await modelGatewaySettingsOf(config),
    poolReservations,
  });
  const server = createServer(app);
  server.on('upgrade', app.onUpgrade);
  answerClientErrors(server);
  return {
    server,
    readModel,
    state,
    async close(): Promise<void> {
      await poolReservations.close();
      await readModel.stop();
      notificationQueues?.close();
      await store.close();
    },
  };
}

/**
 * One API process: the only one, or a worker of runApiPrimary. Stops on SIGTERM or SIGINT: not
 * ready at once, no new connections, in-flight requests finished and event streams ended.
 */
async function runApiProcess(config: Config, options: { logger: Logger; worker?: boolean }): Promise<number> {
  const { logger } = options;
  const stopRequested = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const api = await openApiServer(config, logger);
  const drain = drainable(api.server);
  if (options.worker === true) {
    // A worker listens once its caches are filled: a replaced one must not answer from empty caches
    // while the others could (the chart's startup probe allows for the wait).
    await api.readModel.start();
    await listenOn(api.server, apiListenSettings(config));
  } else {
    // Alone, it listens first and answers /readyz 503 while its caches fill.
    await listenOn(api.server, apiListenSettings(config));
    await api.readModel.start();
  }
  api.state.ready = true;
  logger.info({ url: publicUrlOf(config) }, 'api serving');
  await stopRequested;
  api.state.ready = false;
  await drain.drain({ deadlineMs: DRAIN_DEADLINE_MS });
  await api.close();
  logger.info('api stopped');
  // A worker's channel to the primary would keep it running: closing it lets the process end.
  if (options.worker === true) cluster.worker?.disconnect();
  return 0;
}
