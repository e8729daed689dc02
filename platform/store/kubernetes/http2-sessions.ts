import { createHash } from 'node:crypto';
import http2 from 'node:http2';
import type {
  ClientHttp2Session,
  ClientHttp2Stream,
  OutgoingHttpHeaders,
  SecureClientSessionOptions,
} from 'node:http2';
import { TLSSocket } from 'node:tls';

/** What one request over HTTP/2 is: the transport's request with its TLS material resolved. */
export interface Http2Exchange {
  url: URL;
  /** The kubeconfig's TLS material for this request (CA, client certificate, servername). */
  tls: SecureClientSessionOptions;
  method: string;
  headers: OutgoingHttpHeaders;
  body?: string;
  timeoutMs: number;
}

export interface Http2Answer {
  status: number;
  body: Buffer;
}

/** The server chose HTTP/1.1 (no `h2` in ALPN): the transport sends this origin's requests that way from now on. */
export class Http2Refused extends Error {}

/** How long a PING may go unanswered after a request timed out before the connection counts as dead. */
const PING_TIMEOUT_MS = 5_000;

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2); Node's http client may have added them for HTTP/1.1. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Why a stream failed before it left (a session closing after a GOAWAY): safe to send again. */
const UNSENT_CODES = new Set(['ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION']);

class UnsentStream extends Error {}

/** The TLS alert of a server that supports none of the protocols the client asked for. */
const NO_APPLICATION_PROTOCOL = 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL';

/** One key per API server and TLS identity: a rotated client certificate gets a connection of its own. */
function sessionKey(origin: string, tls: SecureClientSessionOptions): string {
  const { ca, cert, key, pfx, passphrase, servername, rejectUnauthorized } = tls;
  const hash = createHash('sha256');
  // JSON: a Buffer as its bytes, a list as its items.
  for (const part of [ca, cert, key, pfx, passphrase, servername, rejectUnauthorized])
    hash.update(`${part === undefined ? '' : JSON.stringify(part)}\0`);
  return `${origin} ${hash.digest('hex')}`;
}

function http2Headers(exchange: Http2Exchange): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    ':method': exchange.method,
    ':path': `${exchange.url.pathname}${exchange.url.search}`,
  };
  for (const [name, value] of Object.entries(exchange.headers)) {
    const lower = name.toLowerCase();
    if (value !== undefined && !CONNECTION_HEADERS.has(lower)) headers[lower] = value;
  }
  return headers;
}

/**
 * Requests to the API server over one HTTP/2 connection per server and TLS identity, as client-go
 * sends them: requests made at once (a claim and its task) share the connection instead of each
 * waiting for a TLS handshake of its own, and the connection stays open until the server ends it
 * (GOAWAY after its idle timeout), when the next request opens another. A stream the server never
 * took (after a GOAWAY, or refused) is sent once more on a new connection; a request that times out
 * is canceled, and the connection is dropped if it then fails to answer a PING.
 */
export class Http2Sessions {
  private readonly sessions = new Map<string, Promise<ClientHttp2Session>>();
  /** Streams open per session: a session with none does not hold the process open. */
  private readonly open = new WeakMap<ClientHttp2Session, number>();
  private inFlight = 0;
  /** Requests waiting for one of the `maxStreams` places. */
  private readonly waiting: (() => void)[] = [];

  /** `maxStreams`: requests in flight at once, at most; more wait for a place. */
  constructor(private readonly maxStreams: number) {}

  async request(exchange: Http2Exchange): Promise<Http2Answer> {
    await this.place();
    try {
      return await this.send(exchange);
    } finally {
      // The place goes to the next waiting request, or back.
      const next = this.waiting.shift();
      if (next === undefined) this.inFlight--;
      else next();
    }
  }

  /** Closes every connection (the store is closing); requests under way fail. */
  close(): void {
    for (const pending of this.sessions.values())
      void pending.then(
        (session) => {
          session.destroy();
        },
        () => undefined,
      );
    this.sessions.clear();
  }

  private place(): Promise<void> {
    if (this.inFlight < this.maxStreams) {
      this.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        resolve();
      }),
    );
  }

  private async send(exchange: Http2Exchange): Promise<Http2Answer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.exchange(await this.session(exchange), exchange);
      } catch (err) {
        if (attempt === 1 && err instanceof UnsentStream) continue;
        throw err instanceof UnsentStream && err.cause !== undefined ? err.cause : err;
      }
    }
  }

  /** The open connection for the request's server and TLS identity, connecting when there is none. */
  private async session(exchange: Http2Exchange): Promise<ClientHttp2Session> {
    const origin = exchange.url.origin;
    const key = sessionKey(origin, exchange.tls);
    const existing = this.sessions.get(key);
    if (existing !== undefined) {
      const session = await existing.catch(() => undefined);
      if (session !== undefined && !session.closed && !session.destroyed) return session;
      if (this.sessions.get(key) === existing) this.sessions.delete(key);
    }
    const connecting = this.sessions.get(key) ?? this.connect(origin, exchange, key);
    this.sessions.set(key, connecting);
    connecting.catch(() => {
      if (this.sessions.get(key) === connecting) this.sessions.delete(key);
    });
    return connecting;
  }

  private connect(origin: string, exchange: Http2Exchange, key: string): Promise<ClientHttp2Session> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(origin, exchange.tls);
      const timer = setTimeout(() => {
        session.destroy(new Error(`no connection within ${exchange.timeoutMs} ms`));
      }, exchange.timeoutMs);
      const forget = (): void => {
        clearTimeout(timer);
        // Settled by now unless it closed before connecting; then this rejection is the one that counts.
        reject(new UnsentStream(`the connection to ${origin} closed before it was ready`));
        void this.sessions.get(key)?.then(
          (current) => {
            if (current === session) this.sessions.delete(key);
          },
          () => undefined, // it never connected: removed already
        );
      };
      session.once('connect', (_session, socket) => {
        clearTimeout(timer);
        // Frames go out as written, as Node's HTTP/1.1 agents send requests: without it a small
        // frame of one request may wait for the ACK of another's (Nagle's algorithm).
        socket.setNoDelay(true);
        if (!(socket instanceof TLSSocket) || socket.alpnProtocol !== 'h2') {
          session.destroy();
          reject(new Http2Refused(`${origin} did not offer HTTP/2`));
          return;
        }
        session.unref();
        resolve(session);
      });
      session.once('error', (err: NodeJS.ErrnoException) => {
        // A server that speaks only HTTP/1.1 ends the handshake that asks for h2 alone (Go and Node do).
        reject(
          err.code === NO_APPLICATION_PROTOCOL ? new Http2Refused(`${origin} did not offer HTTP/2`) : err,
        );
      });
      // A session that fails later only ends: its streams see the error, the next request reconnects.
      session.on('error', () => undefined);
      session.once('goaway', forget);
      session.once('close', forget);
    });
  }

  private exchange(session: ClientHttp2Session, exchange: Http2Exchange): Promise<Http2Answer> {
    if (session.closed || session.destroyed) return Promise.reject(new UnsentStream('the connection closed'));
    this.opened(session, 1);
    return new Promise<Http2Answer>((resolve, reject) => {
      let status = 0;
      let ended = false;
      const parts: Buffer[] = [];
      let stream: ClientHttp2Stream;
      try {
        // A request without a body ends with its headers (Node ends GET and DELETE so by itself).
        stream = session.request(http2Headers(exchange), { endStream: exchange.body === undefined });
      } catch (err) {
        // Thrown before anything was sent (the session is closing after a GOAWAY): safe to send again.
        reject(new UnsentStream('the connection closed', { cause: err }));
        return;
      }
      stream.on('response', (headers) => {
        status = headers[':status'] ?? 0;
      });
      stream.on('data', (chunk: Buffer) => parts.push(chunk));
      stream.on('end', () => {
        ended = true;
        resolve({ status, body: Buffer.concat(parts) });
      });
      stream.on('error', (err: NodeJS.ErrnoException) => {
        const refused = stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
        reject(
          refused || UNSENT_CODES.has(err.code ?? '') ? new UnsentStream(err.message, { cause: err }) : err,
        );
      });
      stream.on('close', () => {
        // Closed before its end without an error event (a reset with NO_ERROR): no whole answer.
        if (!ended) reject(new Error(`the API server closed the stream (code ${stream.rstCode})`));
      });
      stream.setTimeout(exchange.timeoutMs, () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(new Error(`no answer within ${exchange.timeoutMs} ms`));
        this.dropIfDead(session);
      });
      if (exchange.body !== undefined) stream.end(exchange.body);
    }).finally(() => {
      this.opened(session, -1);
    });
  }

  /** Counts the session's open streams; one with none is unreferenced (an idle client may exit). */
  private opened(session: ClientHttp2Session, change: 1 | -1): void {
    const count = (this.open.get(session) ?? 0) + change;
    this.open.set(session, count);
    if (count === 1 && change === 1) session.ref();
    if (count === 0 && !session.destroyed) session.unref();
  }

  /** After a timeout: a connection that does not answer a PING in time is dropped. */
  private dropIfDead(session: ClientHttp2Session): void {
    if (session.destroyed) return;
    const timer = setTimeout(() => {
      session.destroy();
    }, PING_TIMEOUT_MS);
    timer.unref();
    const sent = session.ping((err) => {
      clearTimeout(timer);
      if (err !== null) session.destroy();
    });
    if (!sent) {
      clearTimeout(timer);
      session.destroy();
    }
  }
}
