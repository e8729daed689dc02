import { Socket, connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_CLIENT_HELLO_BYTES, peekClientHello } from './client-hello.js';
import { normalizeHost } from './allow-list.js';
import type { ProxyContext } from './context.js';
import { refusalLine } from './context.js';
import { checkDestination, parseAuthority } from './destination.js';
import type { Destination } from './destination.js';
import type { DenialReason } from './metrics.js';
import { PROXY_AUTHENTICATE, recordDenial, refuseSocket } from './refusal.js';

/** How long the proxy waits for a client's first bytes: a TLS or HTTP client speaks at once. */
const FIRST_BYTES_TIMEOUT_MS = 10_000;
/** On an explicitly allowed port a server-speaks-first protocol (smtp) sends nothing: go ahead after this. */
const SILENT_CLIENT_MS = 2_000;

const HTTP_METHOD = /^[A-Z]{3,10} /;

/** The client's first bytes (the CONNECT's own trailing bytes included), until they can be classified. */
function firstBytes(socket: Duplex, head: Buffer, waitMs: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let bytes = head;
    const done = (): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', done);
      socket.off('close', done);
      socket.pause();
      resolve(bytes);
    };
    const onData = (chunk: Buffer): void => {
      bytes = Buffer.concat([bytes, chunk]);
      if (peekClientHello(bytes).kind !== 'incomplete' || bytes.length >= MAX_CLIENT_HELLO_BYTES) done();
    };
    const timer = setTimeout(done, waitMs);
    if (peekClientHello(bytes).kind !== 'incomplete') {
      done();
      return;
    }
    socket.on('data', onData);
    socket.once('end', done);
    socket.once('close', done);
  });
}

/**
 * What may flow through an allowed tunnel: TLS whose server name is the CONNECT host; any other
 * protocol only where a rule names the port explicitly (a default port means TLS, or HTTP on 80).
 */
function tunnelRefusal(
  bytes: Buffer,
  destination: Extract<Destination, { allowed: true }>,
): DenialReason | undefined {
  const peek = peekClientHello(bytes);
  if (peek.kind === 'client-hello')
    return peek.serverName !== undefined && normalizeHost(peek.serverName) === destination.host
      ? undefined
      : 'sni_mismatch';
  if (destination.explicitPort) return undefined;
  const isHttp = HTTP_METHOD.test(bytes.toString('latin1', 0, 11));
  return isHttp && destination.port === 80 ? undefined : 'not_allowed';
}

/** Pipes client and upstream both ways; either side idle too long, or closing, ends both. */
function splice(
  context: ProxyContext,
  client: Duplex,
  destination: Extract<Destination, { allowed: true }>,
  first: Buffer,
  release: () => void,
): void {
  const upstream = connect({ host: destination.address, port: destination.port });
  context.metrics.tunnels.inc();
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    context.metrics.tunnels.dec();
    release();
  };
  upstream.once('close', () => {
    close();
    finish();
  });
  client.once('close', close);
  upstream.once('error', close);
  client.once('error', close);
  upstream.setTimeout(context.idleTimeoutMs, close);
  if (client instanceof Socket) client.setTimeout(context.idleTimeoutMs, close);
  upstream.once('connect', () => {
    if (first.length > 0) upstream.write(first);
    client.pipe(upstream);
    upstream.pipe(client);
  });
}

async function openTunnel(
  context: ProxyContext,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
): Promise<void> {
  const target = parseAuthority(req.url ?? '');
  if (target === undefined) {
    refuseSocket(client, 400, 'agentry egress proxy: CONNECT needs host:port\n');
    return;
  }
  const access = await context.access.check(req.headers['proxy-authorization']);
  if (access === undefined) {
    context.metrics.connection('', 'unauthenticated');
    refuseSocket(
      client,
      407,
      refusalLine(target.host, target.port, 'no valid prompt token'),
      PROXY_AUTHENTICATE,
    );
    return;
  }
  const destination = await checkDestination(access.rules, target.host, target.port, context.policy);
  if (!destination.allowed) {
    recordDenial(context, access, destination, 'CONNECT');
    refuseSocket(client, 403, refusalLine(destination.host, destination.port, destination.reason));
    return;
  }
  const release = context.limits.acquire(
    `${access.claims.namespace}/${access.claims.task}/${access.claims.prompt}`,
  );
  if (release === undefined) {
    context.metrics.connection(access.organization, 'overloaded');
    refuseSocket(client, 429, refusalLine(target.host, target.port, 'too many open connections'));
    return;
  }
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  const first = await firstBytes(
    client,
    head,
    destination.explicitPort ? SILENT_CLIENT_MS : FIRST_BYTES_TIMEOUT_MS,
  );
  const refusal = client.destroyed ? undefined : tunnelRefusal(first, destination);
  if (client.destroyed || refusal !== undefined) {
    if (refusal !== undefined)
      recordDenial(context, access, { ...destination, allowed: false, reason: refusal }, 'CONNECT');
    client.destroy();
    release();
    return;
  }
  context.metrics.connection(access.organization, 'allowed');
  splice(context, client, destination, first, release);
}

/** The `connect` event of the proxy's server: a CONNECT tunnel, checked before any byte goes out. */
export function handleConnect(
  context: ProxyContext,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
): void {
  client.on('error', () => undefined); // a client gone mid-check is not the proxy's error
  openTunnel(context, req, client, head).catch((err: unknown) => {
    context.logger.warn({ err }, 'egress tunnel failed');
    context.metrics.connection('', 'failed');
    client.destroy();
  });
}
