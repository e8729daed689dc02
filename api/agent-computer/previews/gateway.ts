import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import type { AgentComputer, WorkspacePreview } from '../../../crds/index.js';
import type { InstallationKey } from '../../../platform/installation-key.js';
import type { Logger } from '../../../platform/log.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { ApiError, errorBody } from '../../errors.js';
import type { ReadModel } from '../../read-model.js';
import { livePreviews } from './preview-list.js';
import { PreviewActivity } from './preview-activity.js';
import { previewRequestOf } from './preview-request.js';
import type { PreviewRequest } from './preview-request.js';
import { PreviewProxy } from './proxy.js';
import type { ProxyTarget } from './proxy.js';
import type { PreviewTokens } from './token.js';
import { runningWorkspace } from './wake.js';
import { WorkspacePorts } from './workspace-ports.js';

/** Open proxied requests and WebSockets per workspace; more wait for none, they get a 503. */
export const MAX_CONNECTIONS_PER_WORKSPACE = 100;
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 300_000;
const RETRY_AFTER_SECONDS = '5';

export interface PreviewGatewayOptions {
  store: ResourceStore;
  readModel: ReadModel;
  installationKey: InstallationKey;
  tokens: PreviewTokens;
  publicUrl: string;
  /** AGENTRY_PREVIEW_DOMAIN (host mode), if set. */
  domain?: string | undefined;
  /** AGENTRY_PREVIEW_WAKE_TIMEOUT: how long a request waits for a hibernated workspace. */
  wakeTimeoutMs: number;
  logger: Logger;
  now: () => Date;
}

/** Unknown, forged, expired and revoked tokens all answer this, so none can be told apart. */
const unknownPreview = (): ApiError => ApiError.notFound('Preview');

/** What a preview request reaches once checked: the workspace, the preview and where to connect. */
interface Admitted {
  ac: AgentComputer;
  target: ProxyTarget;
  release: () => void;
}

/**
 * Serves preview URLs (docs/api.md#previews): checks the token against the workspace's current
 * spec on every request and WebSocket upgrade (so a revocation takes effect at once), wakes a
 * hibernated workspace, forwards only to ports the workspace's own processes listen on, and proxies.
 */
export class PreviewGateway {
  private readonly proxy: PreviewProxy;
  private readonly ports: WorkspacePorts;
  private readonly activity: PreviewActivity;
  private readonly open = new Map<string, number>();
  private readonly proto: 'http' | 'https';

  constructor(private readonly options: PreviewGatewayOptions) {
    this.ports = new WorkspacePorts(options.installationKey);
    this.activity = new PreviewActivity(options.store, options.logger, options.now);
    this.proto = new URL(options.publicUrl).protocol === 'https:' ? 'https' : 'http';
    this.proxy = new PreviewProxy(
      { connectTimeoutMs: CONNECT_TIMEOUT_MS, idleTimeoutMs: IDLE_TIMEOUT_MS },
      (err, _req, res) => {
        this.failed(err, res);
      },
    );
  }

  /** Express middleware before every other route: preview requests are answered here, others pass. */
  readonly handleHttp = (req: Request, res: Response, next: NextFunction): void => {
    const request = previewRequestOf(req, this.options.domain);
    if (request === undefined) {
      next();
      return;
    }
    if (request.needsSlash && (req.method === 'GET' || req.method === 'HEAD')) {
      res.redirect(308, `${request.prefix}/${request.path.slice(1)}`);
      return;
    }
    const closed = new AbortController();
    res.once('close', () => {
      closed.abort();
    });
    this.admit(request, closed.signal).then(
      ({ target, release }) => {
        res.once('close', release);
        req.url = request.path;
        this.proxy.web(req, res, target);
      },
      (err: unknown) => {
        this.logUnexpected(err);
        answerHttp(res, err);
      },
    );
  };

  /** The server's `upgrade` listener for preview URLs; false when the request is not one (the caller closes it). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const request = previewRequestOf(req, this.options.domain);
    if (request === undefined) return false;
    const closed = new AbortController();
    socket.once('close', () => {
      closed.abort();
    });
    this.admit(request, closed.signal).then(
      ({ target, release }) => {
        socket.once('close', release);
        req.url = request.path;
        this.proxy.ws(req, socket, head, target);
      },
      (err: unknown) => {
        this.logUnexpected(err);
        answerSocket(socket, err);
      },
    );
    return true;
  }

  /** The checks of every request, in order; each failure is an ApiError in the documented shape. */
  private async admit(request: PreviewRequest, signal: AbortSignal): Promise<Admitted> {
    const found = this.resolve(request.token);
    if (found === undefined) throw unknownPreview();
    const { store, readModel, wakeTimeoutMs } = this.options;
    const ac = await runningWorkspace({ store, readModel }, found.ac, wakeTimeoutMs, signal);
    // Revoked or expired while it woke: still a 404.
    if (this.resolve(request.token) === undefined) throw unknownPreview();
    const endpoint = ac.status?.endpoint;
    if (endpoint === undefined) throw unknownPreview();
    await this.ports.requireListening(ac, endpoint, found.preview.port);
    const release = this.reserve(ac);
    this.activity.record(ac);
    return {
      ac,
      release,
      target: {
        // A pod's Service exposes the runner's port only; its other ports are on the pod's own IP.
        host: ac.status?.address ?? new URL(endpoint).hostname,
        port: found.preview.port,
        prefix: request.prefix,
        proto: this.proto,
        pathMode: request.pathMode,
      },
    };
  }

  /** The workspace and preview a genuine, live, unrevoked token names, from the cache. */
  private resolve(token: string): { ac: AgentComputer; preview: WorkspacePreview } | undefined {
    const { tokens, readModel } = this.options;
    const previewId = tokens.previewIdOf(token);
    if (previewId === undefined) return undefined;
    const where = readModel.previews.workspace(previewId);
    if (where === undefined) return undefined;
    const ac = readModel.agentComputers.get(where.namespace, where.name);
    if (ac === undefined || ac.metadata.deletionTimestamp !== undefined) return undefined;
    const preview = livePreviews(ac, this.options.now()).find((entry) => entry.id === previewId);
    if (preview === undefined) return undefined;
    const genuine = tokens.verify(token, {
      namespace: where.namespace,
      workspace: where.name,
      previewId,
      port: preview.port,
      expiresAt: preview.expiresAt,
    });
    return genuine ? { ac, preview } : undefined;
  }

  /** Counts one open connection to the workspace; 503 over the cap. Returns its release (once). */
  private reserve(ac: AgentComputer): () => void {
    const key = `${ac.metadata.namespace ?? ''}/${ac.metadata.name}`;
    const count = this.open.get(key) ?? 0;
    if (count >= MAX_CONNECTIONS_PER_WORKSPACE)
      throw new ApiError(
        'service_unavailable',
        `Too many open preview connections to this workspace (at most ${MAX_CONNECTIONS_PER_WORKSPACE}); retry shortly`,
      );
    this.open.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left <= 0) this.open.delete(key);
      else this.open.set(key, left);
    };
  }

  /** The proxy could not reach the port (refused, timed out) or the connection broke. */
  private failed(err: Error, res: ServerResponse | Duplex): void {
    this.options.logger.debug({ err }, 'preview proxy failed');
    const error = new ApiError('bad_gateway', 'The server in the workspace did not answer', undefined, {
      cause: err,
    });
    // A WebSocket may be past its handshake: no HTTP answer can follow, only the close.
    if ('setHeader' in res) answerHttp(res, error);
    else res.destroy();
  }

  /** A failure that is no client error is ours: logged, answered as a plain 500. */
  private logUnexpected(err: unknown): void {
    if (!(err instanceof ApiError)) this.options.logger.error({ err }, 'serving a preview failed');
  }
}

const asApiError = (err: unknown): ApiError =>
  err instanceof ApiError ? err : new ApiError('internal_error', 'Internal server error');

/** `Retry-After` of a 503 (a workspace still starting, or the connection cap). */
const extraHeaders = (error: ApiError): Record<string, string> =>
  error.code === 'service_unavailable' ? { 'Retry-After': RETRY_AFTER_SECONDS } : {};

function answerHttp(res: ServerResponse, err: unknown): void {
  const error = asApiError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.destroyed) return;
  const body = JSON.stringify(errorBody(error, 'task'));
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...extraHeaders(error),
  });
  res.end(body);
}

/** An upgrade refused before the proxy took it: a plain HTTP answer on the socket, then close. */
function answerSocket(socket: Duplex, err: unknown): void {
  const error = asApiError(err);
  if (socket.destroyed || !socket.writable) return;
  const body = JSON.stringify(errorBody(error, 'task'));
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...extraHeaders(error),
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n${head.join('')}\r\n${body}`);
}
