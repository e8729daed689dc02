import http from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { KubeConfig } from '@kubernetes/client-node';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface KubeRequest {
  method: HttpMethod;
  /** An API path such as `/api/v1/namespaces/a/secrets`, appended to the cluster's server URL. */
  path: string;
  query?: URLSearchParams;
  /** Sent as JSON. */
  body?: unknown;
}

export interface KubeResponse {
  status: number;
  /** The parsed JSON answer, or its text when it is not JSON. */
  body: unknown;
}

export type KubeStream = { ok: true; lines: AsyncIterable<string> } | { ok: false; response: KubeResponse };

/** How the store reaches the API server; swapped for a fake in unit tests. */
export interface KubeTransport {
  /** Resolves with any HTTP answer; rejects only when there is none (refused, reset, timed out). */
  request(request: KubeRequest): Promise<KubeResponse>;
  /**
   * A streaming GET (a watch). On 200 the lines (newline-delimited JSON) end when the server closes
   * the stream, and iterating them throws when the connection fails or the signal aborts it.
   */
  stream(request: KubeRequest, signal: AbortSignal): Promise<KubeStream>;
  /** Releases pooled connections, if the transport keeps any. */
  close?(): void;
}

const KEEPALIVE_MS = 30_000;

async function* chunks(stream: Readable): AsyncGenerator<Buffer> {
  for await (const chunk of stream as AsyncIterable<unknown>) {
    if (Buffer.isBuffer(chunk)) yield chunk;
    else if (typeof chunk === 'string') yield Buffer.from(chunk, 'utf8');
  }
}

async function readBody(response: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks(response)) parts.push(chunk);
  const text = Buffer.concat(parts).toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return text;
  }
}

/** Splits a stream into its non-empty lines, in order. */
export async function* splitLines(stream: Readable): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let buffered = '';
  for await (const chunk of chunks(stream)) {
    buffered += decoder.write(chunk);
    let end = buffered.indexOf('\n');
    while (end >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line !== '') yield line;
      end = buffered.indexOf('\n');
    }
  }
  const rest = (buffered + decoder.end()).trim();
  if (rest !== '') yield rest;
}

const isHeaderList = (headers: OutgoingHttpHeaders | readonly string[]): headers is readonly string[] =>
  Array.isArray(headers);

function headerRecord(headers: https.RequestOptions['headers']): OutgoingHttpHeaders {
  if (headers === undefined) return {};
  if (!isHeaderList(headers)) return { ...headers };
  const record: OutgoingHttpHeaders = {};
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const key = headers[i];
    const value = headers[i + 1];
    if (key !== undefined && value !== undefined) record[key] = value;
  }
  return record;
}

interface SendOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  keepAlive?: boolean;
  /** Use the transport's pool of kept-alive connections (short requests, not watches). */
  pooled?: boolean;
}

/**
 * Talks to the API server of a kubeconfig's current context with Node's http(s) client; the
 * kubeconfig supplies TLS (CA, client certificate), the Authorization header (token, exec or auth
 * provider, refreshed per request), basic auth, impersonation and proxies.
 */
export class KubeConfigTransport implements KubeTransport {
  /** Reused connections for short requests: a TLS handshake per request cost a reconcile ~27%. */
  private pool: http.Agent | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly timeoutMs: number,
  ) {}

  async request(request: KubeRequest): Promise<KubeResponse> {
    const response = await this.send(request, { timeoutMs: this.timeoutMs, pooled: true });
    return { status: response.statusCode ?? 0, body: await readBody(response) };
  }

  async stream(request: KubeRequest, signal: AbortSignal): Promise<KubeStream> {
    const response = await this.send(request, { signal, keepAlive: true });
    if (response.statusCode === 200) return { ok: true, lines: splitLines(response) };
    return { ok: false, response: { status: response.statusCode ?? 0, body: await readBody(response) } };
  }

  private url(request: KubeRequest): URL {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}${request.path}`);
    if (request.query !== undefined) url.search = request.query.toString();
    return url;
  }

  /**
   * One keep-alive agent with the kubeconfig's TLS material (CA, client certificate). Tokens travel
   * in headers per request, so exec and auth-provider credentials still refresh.
   */
  private pooledAgent(url: URL, tls: https.RequestOptions): http.Agent {
    if (this.pool !== undefined) return this.pool;
    const common = { keepAlive: true, maxSockets: 32, maxFreeSockets: 8 };
    this.pool =
      url.protocol === 'http:'
        ? new http.Agent(common)
        : new https.Agent({
            ...common,
            ca: tls.ca,
            cert: tls.cert,
            key: tls.key,
            pfx: tls.pfx,
            passphrase: tls.passphrase,
            rejectUnauthorized: tls.rejectUnauthorized,
            servername: tls.servername,
          });
    return this.pool;
  }

  /** Closes pooled connections (KubernetesStore.close calls it). */
  close(): void {
    this.pool?.destroy();
    this.pool = undefined;
  }

  private async send(request: KubeRequest, options: SendOptions): Promise<IncomingMessage> {
    const url = this.url(request);
    const tls: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(tls);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: OutgoingHttpHeaders = { ...headerRecord(tls.headers), Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(body);
    }
    const requestOptions: https.RequestOptions = {
      ...tls,
      method: request.method,
      headers,
      signal: options.signal,
      // Watches keep their own connection; a proxy's agent from the kubeconfig is left alone.
      ...(options.pooled === true && tls.agent === undefined ? { agent: this.pooledAgent(url, tls) } : {}),
    };
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'http:' ? http.request : https.request;
      const outgoing = send(url, requestOptions, resolve);
      outgoing.on('error', reject);
      const { timeoutMs, keepAlive } = options;
      if (timeoutMs !== undefined) {
        outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      }
      if (keepAlive === true) outgoing.on('socket', (socket) => socket.setKeepAlive(true, KEEPALIVE_MS));
      outgoing.end(body);
    });
  }
}
