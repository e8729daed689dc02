import express from 'express';
import { z } from 'zod';
import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { ExecutorCatalog } from '../platform/executor-catalog.js';
import type { Connector } from '../platform/lake-config/dataset-source.js';
import type { NotificationQueues } from '../platform/lake-notifications/types.js';
import type { InstallationKey } from '../platform/installation-key.js';
import type { Logger } from '../platform/log.js';
import { FilesystemObjectStore } from '../platform/objectstore/filesystem.js';
import { signedUrlHandler } from '../platform/objectstore/signed-url-handler.js';
import type { DownloadUrlSigner, ObjectStore } from '../platform/objectstore/types.js';
import type { ResourceStore } from '../platform/store/types.js';
import { authenticate } from './auth/authenticate.js';
import { errorHandler, notFoundHandler } from './middleware/errors.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { jsonBody } from './middleware/json-body.js';
import { methodNotAllowed } from './middleware/method-not-allowed.js';
import { requestLog } from './middleware/request-log.js';
import { openApiDocument } from './openapi/document.js';
import type { ReadModel } from './read-model.js';
import { mountRoutes } from './route.js';
import type { RouteDefinition } from './route.js';
import { artifactPaths, isArtifactUpload } from './agent-computer/artifacts/paths.js';
import { adminOrganizationRoutes } from './organization/routes.js';
import { agentComputerRoutes } from './agent-computer/routes.js';
import {
  DEFAULT_LAKE_CONNECTORS,
  LAKE_PREFIX,
  contextLakeRoutes,
  requireProPlan,
} from './context-lake/routes.js';
import { artifactRoutes } from './agent-computer/artifacts/routes.js';
import type { ArtifactLimits } from './agent-computer/artifacts/routes.js';
import { MAX_UPLOAD_BYTES, fileRoutes } from './task/file-routes.js';
import { taskRoutes } from './task/routes.js';
import { webhookRoutes } from './webhook/routes.js';
import { WorkspacePoolClaims } from './workspace-pool/claim.js';
import { shareLink, sharedTaskEvents } from './task/share.js';
import { keyResolver } from './auth/key-resolver.js';
import { webPages, webSessions } from './web/web-pages.js';
import { NEGOTIATED_ROUTES } from './web/pages.js';
import { directReads } from './direct-reads.js';
import type { ApiRequestListener, UpgradeListener } from './direct-reads.js';
import type { WorkspacePoolReservations } from './workspace-pool/reservations.js';
import { PreviewGateway } from './agent-computer/previews/gateway.js';
import { previewRoutes } from './agent-computer/previews/routes.js';
import { PreviewTokens } from './agent-computer/previews/token.js';
import { previewRequestOf } from './agent-computer/previews/preview-request.js';
import { SigningKeysCache } from './webhook/signing-keys-cache.js';
import { modelGatewayHandler } from './model-gateway/routes.js';
import type { ModelGatewaySettings } from './model-gateway/routes.js';
import { MODEL_GATEWAY_PATH } from '../platform/model-gateway/providers.js';
import { PromptTokens } from '../platform/model-gateway/token.js';
import { PromptAccessCheck } from './model-gateway/prompt-access.js';

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
  /** Derives runner tokens (to read a workspace's events) and share-link tokens. */
  installationKey: InstallationKey;
  /** The executors tasks may name, and their models. */
  executors: ExecutorCatalog;
  /** Interval of the `: keepalive` comment on event streams; docs/api.md#tasks says 15 s (tests shorten it). */
  sseKeepaliveMs?: number;
  /**
   * Installation policy (AGENTRY_WEBHOOK_PRIVATE_TARGETS): webhooks may use plain http and target
   * loopback, private and link-local addresses. An organization can also allow it for itself.
   */
  allowPrivateWebhookTargets: boolean;
  /** Uploaded files (and, with the filesystem store, the server of its signed URLs under /v1/storage/). */
  objectStore: ObjectStore;
  /** Dataset connectors this installation enables (AGENTRY_LAKE_CONNECTORS); s3 and https when omitted. */
  lakeConnectors?: ReadonlySet<Connector>;
  /**
   * Directories an organization's file:// datasets may read below (AGENTRY_LAKE_FILE_ROOTS, and in
   * the embedded default its lake-files directory); none when omitted.
   */
  lakeFileRoots?: (namespace: string) => readonly string[];
  /** The largest SQL answer in bytes (AGENTRY_LAKE_MAX_RESULT_BYTES; 64 MiB when omitted). */
  lakeMaxResultBytes?: number;
  /** S3 bucket notifications of lake datasets; omitted when the installation has no SQS (AGENTRY_SQS_ENABLED). */
  notificationQueues?: NotificationQueues;
  /** Bound of POST /v1/context-lake/sql, cold start included (docs/api.md#limits: 3 minutes; tests shorten it). */
  lakeSqlTimeoutMs?: number;
  /** Artifact upload limits (docs/api.md#limits defaults when omitted). */
  artifactLimits?: Partial<ArtifactLimits>;
  /** Artifact downloads redirect to presigned URLs of this store (AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT); omitted: streamed. */
  artifactDownloadRedirect?: DownloadUrlSigner | undefined;
  /** The built web pages (index.html and assets/); default: dist/web of this installation. */
  webRoot?: string;
  /** How long a web-page session lasts (AGENTRY_UI_SESSION_TTL; 12 h when omitted). */
  uiSessionTtlMs?: number;
  /** Host mode of preview URLs: `<token>.<domain>` (AGENTRY_PREVIEW_DOMAIN); omitted: path mode. */
  previewDomain?: string | undefined;
  /** How long a preview request waits for a hibernated workspace (AGENTRY_PREVIEW_WAKE_TIMEOUT; 60 s when omitted). */
  previewWakeTimeoutMs?: number;
  /**
   * This process's warm-pool claims reserved ahead (docs/workspace-pools.md#claims-reserved-ahead);
   * its owner closes it (releasing what it holds) before the store. Without it, a task's claim
   * writes the member when it claims.
   */
  poolReservations?: WorkspacePoolReservations | undefined;
  /**
   * The model gateway at /model-gateway (docs/model-gateway.md); `false` (AGENTRY_MODEL_GATEWAY=disabled):
   * not served. Omitted: served with the public upstreams and the built-in prices.
   */
  modelGateway?: ModelGatewaySettings | false;
}

const PREVIEW_WAKE_TIMEOUT_MS = 60_000;

const SSE_KEEPALIVE_MS = 15_000;

/** The `paths` object of the OpenAPI document this module built (path → method → operation). */
const DocumentPathsSchema = z.object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) });
const documentPaths = (document: Record<string, unknown>): Record<string, Record<string, unknown>> =>
  DocumentPathsSchema.parse(document).paths;

/** One cap for every signed upload (files and artifacts): the signed-URL handler enforces it. */
const signedUploadBytes = (options: Pick<ApiAppOptions, 'artifactLimits'>): number =>
  options.artifactLimits?.signedUploadBytes ?? MAX_UPLOAD_BYTES;

export function apiRoutes(
  options: Pick<
    ApiAppOptions,
    | 'store'
    | 'readModel'
    | 'publicUrl'
    | 'installationKey'
    | 'executors'
    | 'now'
    | 'sseKeepaliveMs'
    | 'controlNamespace'
    | 'allowPrivateWebhookTargets'
    | 'objectStore'
    | 'logger'
    | 'metrics'
    | 'lakeConnectors'
    | 'lakeFileRoots'
    | 'lakeMaxResultBytes'
    | 'notificationQueues'
    | 'lakeSqlTimeoutMs'
    | 'artifactLimits'
    | 'artifactDownloadRedirect'
    | 'previewDomain'
    | 'poolReservations'
  >,
): RouteDefinition[] {
  const now = options.now ?? (() => new Date());
  const poolClaims = new WorkspacePoolClaims({
    store: options.store,
    readModel: options.readModel,
    metrics: options.metrics,
    now,
    reservations: options.poolReservations,
  });
  return [
    ...agentComputerRoutes({ ...options, poolClaims }),
    ...previewRoutes({
      store: options.store,
      readModel: options.readModel,
      tokens: new PreviewTokens(options.installationKey),
      urls: { publicUrl: options.publicUrl, domain: options.previewDomain },
      now,
    }),
    ...adminOrganizationRoutes({ store: options.store }),
    ...taskRoutes({
      store: options.store,
      readModel: options.readModel,
      publicUrl: options.publicUrl,
      installationKey: options.installationKey,
      executors: options.executors,
      now,
      sseKeepaliveMs: options.sseKeepaliveMs ?? SSE_KEEPALIVE_MS,
      objectStore: options.objectStore,
      poolClaims,
    }),
    ...fileRoutes({ objectStore: options.objectStore, maxUploadBytes: signedUploadBytes(options) }),
    ...artifactRoutes({
      store: options.store,
      readModel: options.readModel,
      objectStore: options.objectStore,
      ...(options.artifactLimits === undefined ? {} : { limits: options.artifactLimits }),
      downloadRedirect: options.artifactDownloadRedirect,
    }),
    ...webhookRoutes({
      store: options.store,
      readModel: options.readModel,
      publicUrl: options.publicUrl,
      allowPrivateWebhookTargets: options.allowPrivateWebhookTargets,
      signingKeys: new SigningKeysCache(options.store, options.controlNamespace),
    }),
    ...contextLakeRoutes({
      store: options.store,
      readModel: options.readModel,
      logger: options.logger,
      metrics: options.metrics,
      installationKey: options.installationKey,
      connectors: options.lakeConnectors ?? DEFAULT_LAKE_CONNECTORS,
      fileRootsOf: options.lakeFileRoots ?? (() => []),
      maxResultBytes: options.lakeMaxResultBytes,
      queues: options.notificationQueues,
      sqlTimeoutMs: options.lakeSqlTimeoutMs,
      now,
    }),
  ];
}

/**
 * The public API's request listener: the Express application (middleware order is the contract's
 * order of checks), in front of which the cached reads are answered without its layer stack
 * (direct-reads.ts).
 */
export function createApiApp(options: ApiAppOptions): ApiRequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const routes = apiRoutes(options);
  const openApi = openApiDocument(routes, {
    version: options.version,
    serverUrl: options.publicUrl,
    servesSignedUrls: options.objectStore instanceof FilesystemObjectStore,
  });

  const logRequests = requestLog({ logger: options.logger });
  const recordDuration = httpMetrics({ registry: options.metrics });
  app.use(logRequests);
  app.use(recordDuration);

  // Preview URLs first: in host mode every path of `<token>.<domain>` is the workspace's.
  const previews = new PreviewGateway({
    store: options.store,
    readModel: options.readModel,
    installationKey: options.installationKey,
    tokens: new PreviewTokens(options.installationKey),
    publicUrl: options.publicUrl,
    domain: options.previewDomain,
    wakeTimeoutMs: options.previewWakeTimeoutMs ?? PREVIEW_WAKE_TIMEOUT_MS,
    logger: options.logger,
    now: options.now ?? (() => new Date()),
  });
  app.use(previews.handleHttp);
  const onUpgrade: UpgradeListener = (req, socket, head) => {
    if (!previews.handleUpgrade(req, socket, head)) socket.destroy();
  };

  const healthy: RequestHandler = (_req, res) => {
    res.json({ status: 'ok' });
  };
  app.get('/healthz', healthy);
  // Clients of the hosted service probe `/health` at the origin; one route each keeps the metric label a template.
  app.get('/health', healthy);
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

  // The model gateway is not part of the REST API: the prompt token is its credential (no API key,
  // no CSRF, no session), and its body is read by itself, with its own limit.
  // A route (not a mount), so the request metric's route label is its template.
  if (options.modelGateway !== false)
    app.all(
      `${MODEL_GATEWAY_PATH}/*path`,
      modelGatewayHandler({
        settings: options.modelGateway ?? {},
        store: options.store,
        readModel: options.readModel,
        executors: options.executors,
        installationKey: options.installationKey,
        metrics: options.metrics,
        now: options.now ?? (() => new Date()),
      }),
    );

  // The web pages (docs/api.md#web-pages) before any JSON route: a browser following a task's url
  // or shareUrl is sent to its page. A session cookie stands for its key on /v1 (authenticate).
  const keys = keyResolver(options);
  const sessions = webSessions(options);
  app.use(webPages({ ...options, keys, sessions }));

  // The /v1 routes without an API key (share links, signed storage URLs): mounted before the authenticated router.
  app.get('/v1/share/:token', shareLink(options));
  app.get(
    '/v1/share/:token/events',
    sharedTaskEvents({ ...options, sseKeepaliveMs: options.sseKeepaliveMs ?? SSE_KEEPALIVE_MS }),
  );
  // Signed URLs carry their own authorization (an HMAC), and the body must reach the handler unread.
  if (options.objectStore instanceof FilesystemObjectStore) {
    const serveSignedUrl = signedUrlHandler({
      store: options.objectStore,
      maxSize: signedUploadBytes(options),
      onError: (err) => {
        options.logger.error({ err }, 'serving a signed storage URL failed');
      },
    });
    app.use('/v1/storage/', (req, res, next) => {
      // Mounted under a path, Express strips it from req.url; the handler reads the full path.
      req.url = req.originalUrl;
      serveSignedUrl(req, res).catch(next);
    });
  }

  app.use(artifactPaths);
  const checkMethod = methodNotAllowed(documentPaths(openApi));
  app.use(checkMethod);
  const v1 = express.Router();
  // A workspace's prompt token reads its organization's context lake (the `agentry lake` client).
  const promptTokens = new PromptAccessCheck(
    new PromptTokens(options.installationKey),
    options.readModel,
    options.now ?? (() => new Date()),
  );
  const authenticateCaller = authenticate({ keys, sessions, promptTokens });
  v1.use(
    '/v1',
    authenticateCaller,
    // Multipart artifact uploads are streamed by their route: their body must reach it unread.
    jsonBody({ limit: '1mb', skip: isArtifactUpload }),
  );
  // The data-context API is for Pro organizations: checked after authentication, before scopes.
  v1.use(LAKE_PREFIX, requireProPlan);
  const table = mountRoutes(v1, routes);
  app.use(v1);

  app.use(notFoundHandler);
  const answerError = errorHandler();
  app.use(answerError);
  return directReads({
    app,
    table,
    // What runs above for a GET of a /v1 route: jsonBody passes a GET on, the rest is for other paths.
    middleware: [logRequests, recordDuration, checkMethod, authenticateCaller],
    onError: answerError,
    variesByAccept: new Set(NEGOTIATED_ROUTES.map(({ route }) => route)),
    // In host mode every path of `<token>.<domain>` is the workspace's, /v1/tasks/… too.
    ownedElsewhere: (req) => previewRequestOf(req, options.previewDomain) !== undefined,
    onUpgrade,
  });
}
