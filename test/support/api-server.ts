import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Express } from 'express';
import type { ApiRequestListener } from '../../api/direct-reads.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiApp } from '../../api/app.js';
import { WorkspacePoolReservations } from '../../api/workspace-pool/reservations.js';
import type { WorkspacePoolReservationsDeps } from '../../api/workspace-pool/reservations.js';
import { answerClientErrors } from '../../api/client-errors.js';
import type { ApiAppOptions } from '../../api/app.js';
import { issueApiKey } from '../../api/auth/api-keys.js';
import type { Scope } from '../../api/auth/scopes.js';
import type { ArtifactLimits } from '../../api/agent-computer/artifacts/routes.js';
import type { ModelGatewaySettings } from '../../api/model-gateway/routes.js';
import { ReadModel } from '../../api/read-model.js';
import { OrganizationSpecSchema, OrganizationType, apiVersionOf } from '../../crds/index.js';
import type { Organization } from '../../crds/index.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { ensureInstallationKey } from '../../platform/installation-key.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Connector } from '../../platform/lake-config/dataset-source.js';
import type { NotificationQueues } from '../../platform/lake-notifications/types.js';
import { createLogger } from '../../platform/log.js';
import type { Logger } from '../../platform/log.js';
import type { LevelWithSilent } from 'pino';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { OBJECT_STORE_URL_PURPOSE } from '../../platform/objectstore/open.js';
import type { DownloadUrlSigner, ObjectStore } from '../../platform/objectstore/types.js';
import { createMetricsRegistry } from '../../platform/metrics.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ensureNamespace } from '../../cli/bootstrap.js';

export const CONTROL_NAMESPACE = 'agentry-system';

export interface TestApi {
  url: string;
  /** The Express application behind `url` (its mounted routes, for the OpenAPI document's test). */
  app: Express;
  /** What serves `url`: the Express application behind the direct reads (api/direct-reads.ts). */
  listener: ApiRequestListener;
  /** The temporary directory holding the store (unless one was given) and the object store's files. */
  dir: string;
  store: ResourceStore;
  readModel: ReadModel;
  /** The installation key the server derives runner and share tokens from. */
  installationKey: InstallationKey;
  /** Uploaded files, under the temporary directory (its signed URLs point at this server), or the one given. */
  objectStore: ObjectStore;
  /** Issues a key for a user of an org (created on first use), waiting until the API knows it. */
  key(options?: { org?: string; user?: string; scopes?: Scope[]; expiresAt?: string }): Promise<string>;
  organization(name: string, plan?: 'free' | 'pro'): Promise<Organization>;
  /** This server's warm-pool reservations, when started with `poolReservations` (as `agentry api` and `serve` run). */
  poolReservations: WorkspacePoolReservations | undefined;
  stop(): Promise<void>;
}

/** The web pages' settings of a test server (docs/api.md#web-pages). */
export interface WebPageOptions {
  /** The built pages; default: dist/web of the repository (503 for pages when it is not built). */
  webRoot?: string;
  /** The public URL (default http://agentry.test). */
  publicUrl?: string;
  /** The public URL is the server's own loopback URL, the origin a browser opens the pages at. */
  loopbackPublicUrl?: boolean;
  /** How long a web-page session lasts (default 12 h). */
  uiSessionTtlMs?: number;
}

/** The app's web-page settings a test gave (the app's defaults for the rest). */
const webPageSettings = (
  options: WebPageOptions,
  serverUrl: string,
): Pick<ApiAppOptions, 'publicUrl' | 'webRoot' | 'uiSessionTtlMs'> => ({
  publicUrl: options.loopbackPublicUrl === true ? serverUrl : (options.publicUrl ?? 'http://agentry.test'),
  ...(options.webRoot === undefined ? {} : { webRoot: options.webRoot }),
  ...(options.uiSessionTtlMs === undefined ? {} : { uiSessionTtlMs: options.uiSessionTtlMs }),
});

/** Preview URL settings of a test server (docs/api.md#previews). */
export interface PreviewOptions {
  /** Host mode: previews at `<token>.<previewDomain>`. */
  previewDomain?: string;
  /** How long a preview request waits for a hibernated workspace (default 60 s). */
  previewWakeTimeoutMs?: number;
}

/** The app's preview settings a test gave (the app's defaults for the rest). */
const previewSettings = (
  options: PreviewOptions,
): Pick<ApiAppOptions, 'previewDomain' | 'previewWakeTimeoutMs'> => ({
  previewDomain: options.previewDomain,
  ...(options.previewWakeTimeoutMs === undefined
    ? {}
    : { previewWakeTimeoutMs: options.previewWakeTimeoutMs }),
});

/** The model gateway's settings a test gave (the app's defaults otherwise). */
const modelGatewayOption = (
  settings: ModelGatewaySettings | undefined,
): Pick<ApiAppOptions, 'modelGateway'> => (settings === undefined ? {} : { modelGateway: settings });

/** Polls until `check` holds: for effects that reach the API's caches through a watch. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Silent, unless the test reads the server's log lines (debug level unless it says otherwise). */
const testLogger = (
  destination: { write(line: string): void } | undefined,
  level: LevelWithSilent = 'debug',
): Logger =>
  destination === undefined ? createLogger({ level: 'silent' }) : createLogger({ level }, destination);

/** The context-lake settings a test gave, leaving out those it did not (the app's defaults apply). */
function contextLakeOptions(
  options: Pick<
    ApiAppOptions,
    'lakeConnectors' | 'notificationQueues' | 'lakeSqlTimeoutMs' | 'lakeFileRoots' | 'lakeMaxResultBytes'
  >,
): Pick<
  ApiAppOptions,
  'lakeConnectors' | 'notificationQueues' | 'lakeSqlTimeoutMs' | 'lakeFileRoots' | 'lakeMaxResultBytes'
> {
  return {
    ...(options.lakeConnectors === undefined ? {} : { lakeConnectors: options.lakeConnectors }),
    ...(options.lakeFileRoots === undefined ? {} : { lakeFileRoots: options.lakeFileRoots }),
    ...(options.lakeMaxResultBytes === undefined ? {} : { lakeMaxResultBytes: options.lakeMaxResultBytes }),
    ...(options.notificationQueues === undefined ? {} : { notificationQueues: options.notificationQueues }),
    ...(options.lakeSqlTimeoutMs === undefined ? {} : { lakeSqlTimeoutMs: options.lakeSqlTimeoutMs }),
  };
}

/** Warm-pool reservations under `holder`, as `agentry api` and `serve` make them; none without a holder. */
const poolReservationsOf = (
  holder: string | undefined,
  { now, ...deps }: Omit<WorkspacePoolReservationsDeps, 'holder' | 'now'> & { now: (() => Date) | undefined },
): WorkspacePoolReservations | undefined =>
  holder === undefined
    ? undefined
    : new WorkspacePoolReservations({ ...deps, now: now ?? (() => new Date()), holder });

/**
 * A real API server on a loopback port, over a real embedded store in a temporary directory or,
 * given one, another store (the cluster tests pass a Kubernetes store). With `createNamespaces`,
 * organizations' namespaces are made as the operator would (a cluster needs them to exist).
 */
export async function startTestApi(
  options: {
    now?: () => Date;
    store?: ResourceStore;
    createNamespaces?: boolean;
    /** Shorter than the contract's 15 s, so a test can see a keepalive comment. */
    sseKeepaliveMs?: number;
    /** The executors tasks may use; the built-ins by default. */
    executors?: ExecutorCatalog;
    /** The installation's webhook target policy; allowed by default, as in the embedded default. */
    allowPrivateWebhookTargets?: boolean;
    /** Another object store (S3 on moto); default: a directory under the temporary directory. */
    objectStore?: ObjectStore;
    /** Artifact limits other than docs/api.md#limits's (a 1 s upload URL, a small request limit). */
    artifactLimits?: Partial<ArtifactLimits>;
    /** Artifact downloads redirect to presigned URLs of this store (S3 on moto); default: streamed. */
    artifactDownloadRedirect?: DownloadUrlSigner;
    /** Dataset connectors of the context lake (the API's default: s3 and https). */
    lakeConnectors?: ReadonlySet<Connector>;
    /** SQS queues for lake notifications; omitted: the installation has no SQS. */
    notificationQueues?: NotificationQueues;
    /** A POST /v1/context-lake/sql bound shorter than 3 minutes. */
    lakeSqlTimeoutMs?: number;
    /** Directories an organization's file:// datasets may read below (default: none). */
    lakeFileRoots?: (namespace: string) => readonly string[];
    /** The largest SQL answer in bytes (default 64 MiB). */
    lakeMaxResultBytes?: number;
    /** Receives the server's JSON log lines (debug level); default: no logs. */
    logDestination?: { write(line: string): void };
    /** The level of the lines `logDestination` receives (default debug; a bench logs at info as served). */
    logLevel?: LevelWithSilent;
    /** The model gateway's settings (upstreams at a stand-in); default: the app's. */
    modelGateway?: ModelGatewaySettings;
    /** Reserve warm-pool claims ahead under this holder name, as the API servers do; default: none. */
    poolReservations?: string;
  } & WebPageOptions &
    PreviewOptions = {},
): Promise<TestApi> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-api-'));
  const store = options.store ?? (await EmbeddedStore.open(join(dir, 'store')));
  if (options.createNamespaces === true) await ensureNamespace(store, CONTROL_NAMESPACE);
  const installationKey = await ensureInstallationKey(store, CONTROL_NAMESPACE);
  const logger = testLogger(options.logDestination, options.logLevel);
  const readModel = new ReadModel(store, { controlNamespace: CONTROL_NAMESPACE, logger });
  await readModel.start();
  // Listening first: the object store's signed URLs need the server's port, and the app the store.
  const server = createServer();
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const url = `http://127.0.0.1:${address.port}`;
  const objectStore =
    options.objectStore ??
    new FilesystemObjectStore({
      root: join(dir, 'objects'),
      baseUrl: url,
      signingSecret: installationKey.derive(OBJECT_STORE_URL_PURPOSE),
    });
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const poolReservations = poolReservationsOf(options.poolReservations, {
    store,
    readModel,
    logger,
    metrics,
    installationKey,
    now: options.now,
  });
  const app = createApiApp({
    poolReservations,
    store,
    readModel,
    logger,
    metrics,
    controlNamespace: CONTROL_NAMESPACE,
    ...webPageSettings(options, url),
    version: 'test',
    isReady: () => true,
    installationKey,
    executors: options.executors ?? new ExecutorCatalog(),
    allowPrivateWebhookTargets: options.allowPrivateWebhookTargets ?? true,
    objectStore,
    ...(options.sseKeepaliveMs === undefined ? {} : { sseKeepaliveMs: options.sseKeepaliveMs }),
    ...(options.artifactLimits === undefined ? {} : { artifactLimits: options.artifactLimits }),
    artifactDownloadRedirect: options.artifactDownloadRedirect,
    ...contextLakeOptions(options),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...previewSettings(options),
    ...modelGatewayOption(options.modelGateway),
  });
  server.on('request', app);
  server.on('upgrade', app.onUpgrade);

  const organization = async (name: string, plan: 'free' | 'pro' = 'pro'): Promise<Organization> => {
    const existing = await store.get(OrganizationType, undefined, name);
    if (existing !== undefined) return existing;
    if (options.createNamespaces === true) await ensureNamespace(store, `agentry-org-${name}`);
    const created = await store.create(OrganizationType, {
      apiVersion: apiVersionOf(OrganizationType),
      kind: OrganizationType.kind,
      metadata: { name },
      spec: OrganizationSpecSchema.parse({ displayName: name, plan }),
    });
    await eventually(() => readModel.organizations.get(undefined, name) !== undefined);
    return created;
  };

  return {
    url,
    app: app.express,
    listener: app,
    dir,
    store,
    readModel,
    installationKey,
    objectStore,
    organization,
    poolReservations,
    async key({ org = 'acme', user = 'alice', scopes = ['*' as Scope], expiresAt } = {}) {
      await organization(org);
      const { key, record } = await issueApiKey(store, CONTROL_NAMESPACE, {
        organization: org,
        user,
        scopes,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      await eventually(
        () => readModel.apiKeys.get(CONTROL_NAMESPACE, `agentry-key-${record.id}`) !== undefined,
      );
      return key;
    },
    async stop() {
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeAllConnections();
      await closed;
      await poolReservations?.close();
      await readModel.stop();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** fetch with an API key in the documented header. */
export function call(
  api: Pick<TestApi, 'url'>,
  path: string,
  init: {
    method?: string;
    key?: string;
    body?: unknown;
    headers?: Record<string, string>;
    /** `manual` to see a redirect itself rather than where it leads. */
    redirect?: 'follow' | 'manual' | 'error';
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.API_KEY = init.key;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  return fetch(`${api.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body,
    ...(init.redirect === undefined ? {} : { redirect: init.redirect }),
  });
}
