import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import { KEY_HEADERS } from '../../auth/authenticate.js';
import { SESSION_COOKIE } from '../../web/session-cookie.js';

/**
 * Path-mode answers share the API's origin: the page gets an opaque origin (no `allow-same-origin`),
 * so its scripts cannot read the web UI's session or call the API as the signed-in user.
 */
export const PATH_MODE_CSP = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

/** Hop-by-hop headers (RFC 9110 7.6.1) and proxy credentials: never passed on in either direction. */
const HOP_BY_HOP = [
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
];

/** Where one proxied request goes and what the workspace is told about the original. */
export interface ProxyTarget {
  host: string;
  port: number;
  /** The path prefix stripped (path mode), for `X-Forwarded-Prefix`; empty in host mode. */
  prefix: string;
  /** `X-Forwarded-Proto`: the scheme clients use (that of the public URL). */
  proto: 'http' | 'https';
  pathMode: boolean;
}

export interface ProxyBounds {
  connectTimeoutMs: number;
  /** A proxied request or WebSocket with no traffic this long is closed. */
  idleTimeoutMs: number;
}

/** The `Cookie` header without the API's session cookie; undefined when nothing else is left. */
function withoutSessionCookie(header: string): string | undefined {
  const kept = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '' && pair.slice(0, pair.indexOf('=')).trim() !== SESSION_COOKIE);
  return kept.length === 0 ? undefined : kept.join('; ');
}

/** Takes the Agentry credentials and hop-by-hop headers out of the request to the workspace. */
function cleanRequest(proxyReq: ClientRequest, req: IncomingMessage, target: ProxyTarget): void {
  for (const name of ['authorization', ...KEY_HEADERS, ...HOP_BY_HOP]) proxyReq.removeHeader(name);
  const cookie = req.headers.cookie;
  if (cookie !== undefined) {
    const kept = withoutSessionCookie(cookie);
    if (kept === undefined) proxyReq.removeHeader('cookie');
    else proxyReq.setHeader('cookie', kept);
  }
  for (const name of (req.headers.connection ?? '').split(',')) {
    const listed = name.trim().toLowerCase();
    if (listed !== '' && listed !== 'upgrade') proxyReq.removeHeader(listed);
  }
  proxyReq.setHeader('x-forwarded-proto', target.proto);
  proxyReq.setHeader('x-forwarded-host', req.headers.host ?? '');
  if (target.prefix === '') proxyReq.removeHeader('x-forwarded-prefix');
  else proxyReq.setHeader('x-forwarded-prefix', target.prefix);
  proxyReq.removeHeader('x-forwarded-for');
  proxyReq.removeHeader('forwarded');
}

/** Drops hop-by-hop headers; in path mode also cookies (they would land on the API's origin) and adds the sandbox CSP. */
function cleanResponse(proxyRes: IncomingMessage, target: ProxyTarget): void {
  const headers = proxyRes.headers;
  for (const name of HOP_BY_HOP) Reflect.deleteProperty(headers, name);
  if (!target.pathMode) return;
  Reflect.deleteProperty(headers, 'set-cookie');
  // Answers with its own policy keep it: both apply, so ours can only narrow what the page may do.
  const own = headers['content-security-policy'];
  const policies = own === undefined ? [] : Array.isArray(own) ? own : [own];
  headers['content-security-policy'] = [PATH_MODE_CSP, ...policies].join(', ');
}

/**
 * HTTP and WebSocket proxying to one port of a workspace (http-proxy-3): bodies stream both ways,
 * never buffered; bounded by a connect and an idle timeout. Failures reach `onError`.
 */
export class PreviewProxy {
  private readonly proxy;
  private readonly targets = new WeakMap<IncomingMessage, ProxyTarget>();

  constructor(
    bounds: ProxyBounds,
    onError: (err: Error, req: IncomingMessage, res: ServerResponse | Duplex) => void,
  ) {
    this.proxy = createProxyServer({
      ws: true,
      xfwd: false,
      // Dev servers (Vite, webpack) refuse unknown Host headers; X-Forwarded-Host carries the original.
      changeOrigin: true,
      connectTimeout: bounds.connectTimeoutMs,
      proxyTimeout: bounds.idleTimeoutMs,
      timeout: bounds.idleTimeoutMs,
    });
    this.proxy.on('proxyReq', (proxyReq, req) => {
      const target = this.targets.get(req);
      if (target !== undefined) cleanRequest(proxyReq, req, target);
    });
    this.proxy.on('proxyReqWs', (proxyReq, req) => {
      const target = this.targets.get(req);
      if (target !== undefined) cleanRequest(proxyReq, req, target);
    });
    this.proxy.on('proxyRes', (proxyRes, req) => {
      const target = this.targets.get(req);
      if (target !== undefined) cleanResponse(proxyRes, target);
    });
    this.proxy.on('error', onError);
  }

  /** `req.url` is already the path the workspace should see. */
  web(req: IncomingMessage, res: ServerResponse, target: ProxyTarget): void {
    this.targets.set(req, target);
    this.proxy.web(req, res, { target: { host: target.host, port: target.port } });
  }

  ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: ProxyTarget): void {
    this.targets.set(req, target);
    this.proxy.ws(req, socket, head, { target: { host: target.host, port: target.port } });
  }
}
