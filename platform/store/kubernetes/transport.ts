import http from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { ConnectionPools } from './connection-pools.js';
import type { ConnectionUse } from './connection-pools.js';
import { Http2Refused, Http2Sessions } from './http2-sessions.js';

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
  /** Closes the connections the transport keeps (pooled, and those of open watches). */
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
  return parseBody(Buffer.concat(parts));
}

function parseBody(raw: Buffer): unknown {
  const text = raw.toString('utf8');
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

/** A request with what the kubeconfig adds to it, ready to send over either protocol. */
interface PreparedRequest {
  url: URL;
  cluster: Cluster;
  tls: https.RequestOptions;
  headers: OutgoingHttpHeaders;
  body: string | undefined;
}

interface SendOptions {
  use: ConnectionUse;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** TCP keep-alive probes, so that a silent watch on a dead connection fails instead of hanging. */
  probeIdle?: boolean;
}

export interface KubeConfigTransportOptions {
  /** How long a request other than a watch may go without an answer. */
  requestTimeoutMs: number;
  /** Requests other than watches in flight at once, at most (HTTP/1.1: each on a connection of its own). */
  maxConnections: number;
  /** Requests over HTTP/2 where the server offers it (KubernetesStoreOptions.http2). */
  http2: boolean;
}

/**
 * Talks to the API server of a kubeconfig's current context; the kubeconfig supplies TLS (CA,
 * client certificate), the Authorization header (token, exec or auth provider, refreshed per
 * request), basic auth, impersonation and proxies. Requests go over kept-alive HTTP/1.1
 * connections (a TLS handshake per request cost a first reconcile ~27%) or, when asked, over HTTP/2
 * to an https server without a proxy (http2-sessions.ts: one connection carries requests made at
 * once, as client-go's does). Watches hold HTTP/1.1 connections of their own.
 */
export class KubeConfigTransport implements KubeTransport {
  private readonly pools: ConnectionPools;
  private readonly http2: Http2Sessions;
  /** Servers that did not offer HTTP/2: their requests go over HTTP/1.1 from then on. */
  private readonly http1Only = new Set<string>();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: KubeConfigTransportOptions,
  ) {
    this.pools = new ConnectionPools(options.maxConnections);
    this.http2 = new Http2Sessions(options.maxConnections);
  }

  async request(request: KubeRequest): Promise<KubeResponse> {
    const prepared = await this.prepare(request);
    const timeoutMs = this.options.requestTimeoutMs;
    if (this.overHttp2(prepared)) {
      try {
        const { url, headers, body } = prepared;
        const { ca, cert, key, pfx, passphrase, servername, rejectUnauthorized } = prepared.tls;
        const tls = { ca, cert, key, pfx, passphrase, servername, rejectUnauthorized };
        const method = request.method;
        const answer = await this.http2.request({ url, tls, method, headers, body, timeoutMs });
        return { status: answer.status, body: parseBody(answer.body) };
      } catch (err) {
        if (!(err instanceof Http2Refused)) throw err;
        this.http1Only.add(prepared.url.origin);
      }
    }
    const response = await this.send(request.method, prepared, { use: 'request', timeoutMs });
    return { status: response.statusCode ?? 0, body: await readBody(response) };
  }

  async stream(request: KubeRequest, signal: AbortSignal): Promise<KubeStream> {
    const prepared = await this.prepare(request);
    const response = await this.send(request.method, prepared, { use: 'watch', signal, probeIdle: true });
    if (response.statusCode === 200) return { ok: true, lines: splitLines(response) };
    return { ok: false, response: { status: response.statusCode ?? 0, body: await readBody(response) } };
  }

  private cluster(): Cluster {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    return cluster;
  }

  private url(cluster: Cluster, request: KubeRequest): URL {
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}${request.path}`);
    if (request.query !== undefined) url.search = request.query.toString();
    return url;
  }

  /** Closes every connection, pooled, multiplexed or streaming (KubernetesStore.close calls it). */
  close(): void {
    this.pools.close();
    this.http2.close();
  }

  private overHttp2({ url, cluster }: PreparedRequest): boolean {
    return (
      this.options.http2 &&
      url.protocol === 'https:' &&
      cluster.proxyUrl === undefined &&
      !this.http1Only.has(url.origin)
    );
  }

  private async prepare(request: KubeRequest): Promise<PreparedRequest> {
    const cluster = this.cluster();
    const url = this.url(cluster, request);
    // Per request, as client-node does: tokens and exec credentials refresh, certificate files are re-read.
    const tls: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(tls);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: OutgoingHttpHeaders = { ...headerRecord(tls.headers), Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(body);
    }
    return { url, cluster, tls, headers, body };
  }

  private send(
    method: HttpMethod,
    { url, cluster, tls, headers, body }: PreparedRequest,
    options: SendOptions,
  ): Promise<IncomingMessage> {
    const requestOptions: https.RequestOptions = {
      ...tls,
      method,
      headers,
      signal: options.signal,
      // client-node's agent (new per call, so never reused) is replaced, unless it is a proxy's.
      ...(cluster.proxyUrl === undefined ? { agent: this.pools.agent(url.protocol, options.use) } : {}),
    };
    return new Promise((resolve, reject) => {
      const send = url.protocol === 'http:' ? http.request : https.request;
      const outgoing = send(url, requestOptions, resolve);
      outgoing.on('error', reject);
      const { timeoutMs, probeIdle } = options;
      if (timeoutMs !== undefined) {
        outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      }
      if (probeIdle === true) outgoing.on('socket', (socket) => socket.setKeepAlive(true, KEEPALIVE_MS));
      outgoing.end(body);
    });
  }
}
