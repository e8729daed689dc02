import type { Duplex } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { ProxyContext } from './context.js';
import type { Destination } from './destination.js';
import type { PromptAccess } from './prompt-access.js';

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  403: 'Forbidden',
  407: 'Proxy Authentication Required',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
};

/** Asks the client for the prompt token (curl, git and pip retry with the URL's credentials). */
export const PROXY_AUTHENTICATE = { 'Proxy-Authenticate': 'Basic realm="agentry"' };

/** A refusal answered on a CONNECT socket (no HTTP response object there), then the socket closed. */
export function refuseSocket(
  socket: Duplex,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Refused'}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** The same refusal on a plain HTTP request. */
export function refuseResponse(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close', ...headers })
    .end(body);
}

/** Counts and records a refusal on the prompt's task (status.egressDenials, an EgressDenied Event). */
export function recordDenial(
  context: ProxyContext,
  access: PromptAccess,
  denied: Extract<Destination, { allowed: false }>,
  method: 'CONNECT' | 'HTTP',
): void {
  context.metrics.denied(access.organization, denied.reason);
  context.metrics.connection(access.organization, 'denied');
  context.ledger.record(access.task, denied.host, denied.port, denied.reason, method);
  context.logger.info(
    {
      task: access.claims.task,
      namespace: access.claims.namespace,
      host: denied.host,
      port: denied.port,
      reason: denied.reason,
    },
    'egress denied',
  );
}
