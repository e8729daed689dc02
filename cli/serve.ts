import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createApiApp } from '../api/app.js';
import { WorkspacePoolReservations } from '../api/workspace-pool/reservations.js';
import type { ApiRequestListener } from '../api/direct-reads.js';
import { answerClientErrors, answerStarting } from '../api/client-errors.js';
import { ReadModel } from '../api/read-model.js';
import { ConfigError, apiListenSettings, artifactLimitsOf, publicUrlOf } from '../platform/config.js';
import { notificationQueuesFromConfig } from '../platform/lake-notifications/queues.js';
import type { SqsNotificationQueues } from '../platform/lake-notifications/queues.js';
import type { Config } from '../platform/config.js';
import type { Connector } from '../platform/lake-config/dataset-source.js';
import { ensureOrganizationFileRoot, organizationFileRoot } from '../platform/lake-config/file-roots.js';
import { parseDuration } from '../platform/duration.js';
import { loadExecutorCatalog } from '../platform/executor-catalog.js';
import { loadSkillCatalog } from '../platform/skill-catalog.js';
import type { ExecutorCatalog } from '../platform/executor-catalog.js';
import { ensureInstallationKey } from '../platform/installation-key.js';
import type { InstallationKey } from '../platform/installation-key.js';
import { hostInUrl, listenOn } from '../platform/listen.js';
import type { EgressProxy } from '../egress/proxy.js';
import { startEgressProxy } from './egress-proxy.js';
import { createLogger } from '../platform/log.js';
import { createMetricsRegistry } from '../platform/metrics.js';
import { downloadRedirectTarget } from '../platform/objectstore/download-redirect.js';
import { openObjectStore } from '../platform/objectstore/open.js';
import type { ObjectStore } from '../platform/objectstore/types.js';
import { openStore } from '../platform/store/open.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { Logger } from '../platform/log.js';
import type { Registry } from 'prom-client';
import { startOperator } from '../operator/operator.js';
import type { RunningOperator } from '../operator/operator.js';
import { ProcessRuntime } from '../operator/runtimes/process.js';
import type { RunnerCommand } from '../operator/runtimes/process.js';
import { existsSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AGENTRY_VERSION } from '../platform/version.js';
import { ensureBootstrapKey, ensureDefaultOrganization } from './bootstrap.js';
import { webhookDeliverySettings } from './webhook-delivery-settings.js';
import { modelGatewaySettingsOf } from './model-gateway-settings.js';

export interface RunningServer {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/**
 * `agentry runner` (or `agentry lake`), started as this process was: same node, same flags, same
 * entry point. Workloads run in their own directory, so relative module paths (an `--import`
 * loader) are made absolute.
 */
function commandOfThisProcess(program: 'runner' | 'lake'): RunnerCommand {
  const flags = process.execArgv.map((arg, i) =>
    process.execArgv[i - 1] === '--import' && arg.startsWith('.') ? pathToFileURL(resolve(arg)).href : arg,
  );
  return {
    command: process.execPath,
    args: [...flags, resolve(process.argv[1] ?? 'dist/cli/main.js'), program],
  };
}

/** On one machine a lake may also read local files (`file://` datasets): the embedded default enables it. */
const embeddedLakeConnectors = (config: Config): ReadonlySet<Connector> =>
  new Set([...config.AGENTRY_LAKE_CONNECTORS, 'file']);

/**
 * Where an organization's file:// datasets may read on one machine: its own
 * `<data dir>/lake-files/<namespace>/` and the installation's AGENTRY_LAKE_FILE_ROOTS.
 */
const embeddedFileRoots =
  (config: Config) =>
  (namespace: string): string[] => [
    ...config.AGENTRY_LAKE_FILE_ROOTS,
    organizationFileRoot(config.AGENTRY_DATA_DIR, namespace),
  ];

/**
 * What a confined lake server may read besides its own directory: its file roots. The
 * organization's own is created (a place for its files, and something for bubblewrap to bind);
 * a configured root that does not exist is left out (bubblewrap cannot bind it).
 */
const lakeReadablePaths =
  (config: Config) =>
  (namespace: string): string[] => [
    ...config.AGENTRY_LAKE_FILE_ROOTS.filter((root) => existsSync(root)),
    ensureOrganizationFileRoot(config.AGENTRY_DATA_DIR, namespace),
  ];

/** The data directory holds every organization's secrets: no file root may contain it. */
function checkFileRoots(config: Config): void {
  const dataDir = resolve(config.AGENTRY_DATA_DIR);
  for (const root of config.AGENTRY_LAKE_FILE_ROOTS)
    if (dataDir === root || dataDir.startsWith(root.endsWith(sep) ? root : `${root}${sep}`))
      throw new ConfigError(
        'AGENTRY_LAKE_FILE_ROOTS must not contain AGENTRY_DATA_DIR (it holds every organization’s secrets)',
      );
}

/** The embedded store lives in this process: API workers in other processes could not share it. */
function checkOneProcess(config: Config): void {
  if (config.AGENTRY_API_WORKERS !== 1)
    throw new ConfigError(
      'AGENTRY_API_WORKERS is for `agentry api` on the Kubernetes store; `agentry serve` is one process (its store lives in it): unset it',
    );
}

/** What every lake this process starts gets, besides its own variables. */
const embeddedLakeEnv =
  (config: Config) =>
  (namespace: string): Record<string, string> => ({
    AGENTRY_LAKE_CONNECTORS: [...embeddedLakeConnectors(config)].join(','),
    AGENTRY_LAKE_FILE_ROOTS: embeddedFileRoots(config)(namespace).join(','),
    // One machine: S3-compatible stores and file servers on localhost are the common case.
    AGENTRY_LAKE_PRIVATE_TARGETS: config.AGENTRY_LAKE_PRIVATE_TARGETS ?? 'true',
    AGENTRY_LAKE_MAX_RESULT_BYTES: String(config.AGENTRY_LAKE_MAX_RESULT_BYTES),
  });

/**
 * On one machine the agent CLIs use the credentials of whoever runs `agentry serve`: each executor
 * variable (ANTHROPIC_API_KEY...) without a Secret is taken from this process's environment.
 */
function executorEnvOfThisProcess(executors: ExecutorCatalog): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of executors.names()) {
    for (const variable of Object.keys(executors.get(name)?.env ?? {})) {
      const value = process.env[variable];
      if (value !== undefined) env[variable] = value;
    }
  }
  return env;
}

/** Hosts a workspace of the embedded default reaches without the egress proxy. */
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'];

/**
 * The egress proxy in this process, listening on AGENTRY_EGRESS_PROXY_PORT (0: any free port).
 * Resolves with the URL workspaces reach it at (AGENTRY_EGRESS_PROXY_URL when set).
 */
async function startEmbeddedEgressProxy(
  store: ResourceStore,
  config: Config,
  logger: Logger,
  registry: Registry,
  installationKey: InstallationKey,
): Promise<{ proxy: EgressProxy; url: string }> {
  const child = logger.child({ component: 'egress-proxy' });
  const { proxy, port } = await startEgressProxy(store, config, child, registry, installationKey);
  return {
    proxy,
    url: config.AGENTRY_EGRESS_PROXY_URL ?? `http://${hostInUrl(config.AGENTRY_HOST)}:${port}`,
  };
}

/**
 * Where local runners reach this API server (the model gateway, the lake client): AGENTRY_INTERNAL_URL,
 * else this process's own port on loopback (a wildcard listen address is not one to connect to).
 */
function embeddedInternalUrl(config: Config, port: number): string {
  if (config.AGENTRY_INTERNAL_URL !== undefined) return config.AGENTRY_INTERNAL_URL;
  const wildcard = ['0.0.0.0', '::', '[::]'].includes(config.AGENTRY_HOST);
  const host = wildcard
    ? '127.0.0.1'
    : config.AGENTRY_HOST.includes(':') && !config.AGENTRY_HOST.startsWith('[')
      ? `[${config.AGENTRY_HOST}]`
      : config.AGENTRY_HOST;
  return `http://${host}:${port}`;
}

/**
 * The operator in this process, running agent computers as local runner processes under the data
 * directory. Runners are started the way this process was (same node flags and entry point).
 */
async function startEmbeddedOperator(
  store: ResourceStore,
  config: Config,
  logger: Logger,
  registry: Registry,
  shared: {
    installationKey: InstallationKey;
    executors: ExecutorCatalog;
    objectStore: ObjectStore;
    lakeNotificationQueues?: SqsNotificationQueues;
    /** This API server as runners reach it (the lake client's API). */
    internalUrl: string;
    /** The model gateway as runners reach it; undefined: off (keys go into executors' environment). */
    gatewayUrl: string | undefined;
    /** The in-process egress proxy as runners reach it. */
    egressProxyUrl: string;
  },
): Promise<{ operator: RunningOperator; runtime: ProcessRuntime }> {
  const { internalUrl, gatewayUrl, egressProxyUrl, ...options } = shared;
  let notify: (namespace: string, name: string, program: 'runner' | 'lake') => void = () => undefined;
  const runtime = new ProcessRuntime({
    dataDir: config.AGENTRY_DATA_DIR,
    runnerCommand: commandOfThisProcess('runner'),
    lakeCommand: commandOfThisProcess('lake'),
    lakeEnv: embeddedLakeEnv(config),
    logger: logger.child({ component: 'process-runtime' }),
    env: { AGENTRY_LOG_LEVEL: config.AGENTRY_LOG_LEVEL },
    isolation: config.AGENTRY_PROCESS_ISOLATION,
    readOnlyPaths: config.AGENTRY_PROCESS_READ_ONLY_PATHS,
    lakeReadOnlyPaths: lakeReadablePaths(config),
    onChange: (namespace, name, program) => {
      notify(namespace, name, program);
    },
  });
  const operator = await startOperator({
    store,
    logger: logger.child({ component: 'operator' }),
    registry,
    runtimes: new Map([['process', runtime]]),
    defaultRuntime: 'process',
    controlNamespace: config.AGENTRY_NAMESPACE,
    ...options,
    executorEnvFallback: executorEnvOfThisProcess(shared.executors),
    // Runners listen on loopback and local services are the common case: reached directly.
    workspaceAccess: { apiUrl: internalUrl, gatewayUrl, egressProxyUrl, directHosts: LOOPBACK_HOSTS },
    skills: await loadSkillCatalog(config.AGENTRY_SKILLS_FILE),
    deletedTaskRetentionMs: parseDuration(config.AGENTRY_DELETED_TASK_RETENTION),
    webhooks: webhookDeliverySettings(config, true),
    defaultWorkspacePool: config.AGENTRY_DEFAULT_WORKSPACE_POOL ?? undefined,
    keepRunnerConnections: true,
  });
  notify = (namespace, name, program) => {
    if (program === 'lake') operator.notifyContextLake(namespace, name);
    else operator.notifyAgentComputer(namespace, name);
  };
  return { operator, runtime };
}

/** `agentry serve`: the embedded default — API server and operator in one process. */
export async function serve(config: Config, announce: (line: string) => void): Promise<RunningServer> {
  checkFileRoots(config);
  checkOneProcess(config);
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL });
  const store = await openStore(config);
  await ensureDefaultOrganization(store);
  const newKey = await ensureBootstrapKey(store, config.AGENTRY_NAMESPACE, config.AGENTRY_API_KEY);

  const metrics = createMetricsRegistry();
  const installationKey = await ensureInstallationKey(store, config.AGENTRY_NAMESPACE);
  const executors = await loadExecutorCatalog(config.AGENTRY_EXECUTORS_FILE);
  // Listening first: with port 0 only the bound port makes the URLs runners fetch uploaded files
  // from. Until the app is attached, requests are told to come back.
  const attached: { app?: ApiRequestListener } = {};
  const server = createServer((req, res) => {
    if (attached.app === undefined) answerStarting(req, res);
    else attached.app(req, res);
  });
  server.on('upgrade', (req, socket, head) => {
    if (attached.app === undefined) socket.destroy();
    else attached.app.onUpgrade(req, socket, head);
  });
  answerClientErrors(server);
  const port = await listenOn(server, apiListenSettings(config));
  const url = `http://${config.AGENTRY_HOST}:${port}`;
  const publicUrl = config.AGENTRY_PUBLIC_URL === undefined ? url : publicUrlOf(config);
  const objectStore = openObjectStore(config, { installationKey, publicUrl });
  const notificationQueues = notificationQueuesFromConfig(config);
  const egress = await startEmbeddedEgressProxy(store, config, logger, metrics, installationKey);
  const { operator, runtime } = await startEmbeddedOperator(store, config, logger, metrics, {
    installationKey,
    executors,
    objectStore,
    internalUrl: embeddedInternalUrl(config, port),
    gatewayUrl: config.AGENTRY_MODEL_GATEWAY === 'disabled' ? undefined : embeddedInternalUrl(config, port),
    egressProxyUrl: egress.url,
    ...(notificationQueues === undefined ? {} : { lakeNotificationQueues: notificationQueues }),
  });
  const readModel = new ReadModel(store, { controlNamespace: config.AGENTRY_NAMESPACE, logger });
  let ready = false;
  const poolReservations = new WorkspacePoolReservations({
    store,
    readModel,
    logger,
    metrics,
    installationKey,
    now: () => new Date(),
  });
  attached.app = createApiApp({
    store,
    readModel,
    logger,
    metrics,
    controlNamespace: config.AGENTRY_NAMESPACE,
    installationKey,
    executors,
    // One machine: receivers on localhost are the common case, unless turned off explicitly.
    allowPrivateWebhookTargets: webhookDeliverySettings(config, true).allowPrivateTargets,
    objectStore,
    publicUrl,
    // The API accepts the datasets the lakes this process starts can load.
    lakeConnectors: embeddedLakeConnectors(config),
    lakeFileRoots: embeddedFileRoots(config),
    lakeMaxResultBytes: config.AGENTRY_LAKE_MAX_RESULT_BYTES,
    ...(notificationQueues === undefined ? {} : { notificationQueues }),
    artifactLimits: artifactLimitsOf(config),
    artifactDownloadRedirect: downloadRedirectTarget(config, objectStore),
    lakeSqlTimeoutMs: parseDuration(config.AGENTRY_LAKE_SQL_TIMEOUT),
    uiSessionTtlMs: parseDuration(config.AGENTRY_UI_SESSION_TTL),
    previewDomain: config.AGENTRY_PREVIEW_DOMAIN,
    previewWakeTimeoutMs: parseDuration(config.AGENTRY_PREVIEW_WAKE_TIMEOUT),
    // One machine: the gateway injects the keys of whoever runs `agentry serve`, as dispatch did.
    modelGateway: await modelGatewaySettingsOf(config, executorEnvOfThisProcess(executors)),
    version: AGENTRY_VERSION,
    poolReservations,
    isReady: () => ready,
  });
  await readModel.start();
  ready = true;

  logger.info({ url, dataDir: config.AGENTRY_DATA_DIR }, 'agentry is serving');
  if (newKey !== undefined) {
    announce(`API key of organization "default" (shown once, stored only as a hash):\n\n  ${newKey}\n`);
  }
  // Last, so whoever waits for this line has seen everything above it.
  // The pages at the public URL: sign-in and mutations are refused from any other origin.
  announce(
    `Agentry ${AGENTRY_VERSION} is serving at ${url}/v1, web pages at ${publicUrl}/ (data in ${config.AGENTRY_DATA_DIR})`,
  );
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
      await poolReservations.close();
      await readModel.stop();
      await egress.proxy.stop();
      await operator.stop();
      // A clean stop of the embedded default stops its runners; after a crash the next start adopts them.
      await runtime.close({ stopRunners: true });
      notificationQueues?.close();
      await store.close();
    },
  };
}
