import { request } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ProxyContext } from './context.js';
import { refusalLine } from './context.js';
import { normalizeHost } from './allow-list.js';
import { checkDestination } from './destination.js';
import { PROXY_AUTHENTICATE, recordDenial, refuseResponse } from './refusal.js';

/** Headers meant for the proxy or for one hop: never forwarded (the prompt token above all). */
const HOP_HEADERS = new Set([
  'proxy-authorization',
  'proxy-connection',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

/** Hop-by-hop headers of the upstream's answer: this hop has its own. */
const ANSWER_HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection']);

function forwardedHeaders(headers: IncomingHttpHeaders, host: string): Record<string, string | string[]> {
  const listed = new Set((headers.connection ?? '').split(',').map((name) => name.trim().toLowerCase()));
  const out: Record<string, string | string[]> = { host };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(name) || listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The absolute-form target of a plain-HTTP proxy request, or undefined (origin-form, https, garbage). */
function absoluteTarget(url: string | undefined): URL | undefined {
  try {
    const target = new URL(url ?? '');
    return target.protocol === 'http:' ? target : undefined;
  } catch {
    return undefined;
  }
}

async function forward(context: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const target = absoluteTarget(req.url);
  if (target === undefined) {
    refuseResponse(
      res,
      400,
      'agentry egress proxy: only absolute http:// requests and CONNECT are proxied\n',
    );
    return;
  }
  const host = normalizeHost(target.hostname.replace(/^\[(.*)\]$/, '$1'));
  const port = target.port === '' ? 80 : Number(target.port);
  const access = await context.access.check(req.headers['proxy-authorization']);
  if (access === undefined) {
    context.metrics.connection('', 'unauthenticated');
    refuseResponse(res, 407, refusalLine(host, port, 'no valid prompt token'), PROXY_AUTHENTICATE);
    return;
  }
  const destination = await checkDestination(access.rules, host, port, context.policy);
  if (!destination.allowed) {
    recordDenial(context, access, destination, 'HTTP');
    refuseResponse(res, 403, refusalLine(host, port, destination.reason));
    return;
  }
  const release = context.limits.acquire(
    `${access.claims.namespace}/${access.claims.task}/${access.claims.prompt}`,
  );
  if (release === undefined) {
    context.metrics.connection(access.organization, 'overloaded');
    refuseResponse(res, 429, refusalLine(host, port, 'too many open connections'));
    return;
  }
  context.metrics.connection(access.organization, 'allowed');
  context.metrics.tunnels.inc();
  res.once('close', () => {
    context.metrics.tunnels.dec();
    release();
  });
  const upstream = request({
    host: destination.address,
    port,
    method: req.method,
    path: `${target.pathname}${target.search}`,
    headers: forwardedHeaders(req.headers, target.host),
    setHost: false,
    timeout: context.idleTimeoutMs,
  });
  upstream.on('timeout', () => upstream.destroy(new Error('upstream idle')));
  upstream.on('error', () => {
    if (!res.headersSent) refuseResponse(res, 502, refusalLine(host, port, 'upstream unreachable'));
    else res.destroy();
  });
  upstream.on('response', (answer) => {
    const headers = Object.fromEntries(
      Object.entries(answer.headers).filter(([name]) => !ANSWER_HOP_HEADERS.has(name)),
    );
    res.writeHead(answer.statusCode ?? 502, headers);
    answer.pipe(res);
  });
  req.pipe(upstream);
}

/** The `request` event of the proxy's server: plain HTTP in absolute form, checked, then streamed both ways. */
export function handleForward(context: ProxyContext, req: IncomingMessage, res: ServerResponse): void {
  forward(context, req, res).catch((err: unknown) => {
    context.logger.warn({ err }, 'egress forwarding failed');
    context.metrics.connection('', 'failed');
    if (!res.headersSent) refuseResponse(res, 502, 'agentry egress proxy: forwarding failed\n');
    else res.destroy();
  });
}
