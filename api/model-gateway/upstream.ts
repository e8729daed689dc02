import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PROVIDER_CONVENTIONS } from '../../platform/model-gateway/providers.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';

/** Headers of one connection only (RFC 9110 §7.6.1), never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Every header any provider's key travels in: a prompt token never reaches a provider. */
const KEY_HEADERS = new Set(Object.values(PROVIDER_CONVENTIONS).flatMap((c) => c.keyHeaders));

/** Not the provider's business: the API's own session cookie, and what the gateway sets itself. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'content-length',
  'cookie',
  'accept-encoding',
  'x-forwarded-for',
]);

/** Where the real key goes, in each provider's canonical header. */
const keyHeaderOf = (provider: ModelProvider, key: string): OutgoingHttpHeaders => {
  switch (provider) {
    case 'anthropic':
      return { 'x-api-key': key };
    case 'openai':
      return { authorization: `Bearer ${key}` };
    case 'gemini':
      return { 'x-goog-api-key': key };
  }
};

const namedInConnection = (headers: IncomingHttpHeaders): Set<string> =>
  new Set(
    (headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ''),
  );

/** The headers to send the provider: the client's, without its key, hop-by-hop headers or encodings. */
export function upstreamHeaders(
  provider: ModelProvider,
  incoming: IncomingHttpHeaders,
  key: string,
  bodyBytes: number,
): OutgoingHttpHeaders {
  const connectionScoped = namedInConnection(incoming);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || connectionScoped.has(name)) continue;
    if (KEY_HEADERS.has(name) || DROPPED_REQUEST_HEADERS.has(name)) continue;
    headers[name] = value;
  }
  // Plain bytes: the gateway reads the usage from them, and passes them on as they came.
  headers['accept-encoding'] = 'identity';
  if (bodyBytes > 0) headers['content-length'] = bodyBytes;
  return { ...headers, ...keyHeaderOf(provider, key) };
}

/** The response headers to pass on to the client (Node frames the body itself). */
export function downstreamHeaders(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const connectionScoped = namedInConnection(incoming);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (
      value === undefined ||
      HOP_BY_HOP.has(name) ||
      connectionScoped.has(name) ||
      name === 'content-length'
    )
      continue;
    headers[name] = value;
  }
  return headers;
}

/**
 * The provider's URL of a call: the upstream base, the path after `/model-gateway/<provider>`
 * (Anthropic's and OpenAI's get `/v1` when the client's base URL had none: clients differ), and the
 * query without `key` (where a Gemini client may have put its token).
 */
export function upstreamUrl(
  provider: ModelProvider,
  base: string,
  path: string,
  query: URLSearchParams,
): URL {
  const versioned = provider !== 'gemini' && path !== '/v1' && !path.startsWith('/v1/') ? `/v1${path}` : path;
  const url = new URL(`${base.replace(/\/+$/, '')}${versioned}`);
  const forwarded = new URLSearchParams(query);
  forwarded.delete('key');
  url.search = forwarded.toString();
  return url;
}

/** A call to the provider in flight: its response once the headers came, and a way to abandon it. */
export interface UpstreamCall {
  response: Promise<IncomingMessage>;
  /** Ends the call (the client left, or the gateway gave up): the response stream errors. */
  abort: () => void;
}

/**
 * Sends the call upstream. `idleTimeoutMs` bounds every silence of the connection (waiting for
 * the headers, and between chunks of a stream): a provider that goes quiet ends the call.
 */
export function callUpstream(
  url: URL,
  options: { method: string; headers: OutgoingHttpHeaders; body: Buffer; idleTimeoutMs: number },
): UpstreamCall {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const req = send(url, { method: options.method, headers: options.headers });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    // Every error, also those after the response began (they surface again on its stream).
    req.on('error', reject);
  });
  req.setTimeout(options.idleTimeoutMs, () => {
    req.destroy(new Error('the provider was silent for too long'));
  });
  req.end(options.body.length > 0 ? options.body : undefined);
  return {
    response,
    abort: () => {
      req.destroy();
    },
  };
}
