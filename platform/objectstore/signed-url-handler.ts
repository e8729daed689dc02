import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FilesystemObjectStore, SignatureCheck, SignedMethod } from './filesystem.js';
import { STORAGE_PATH } from './filesystem.js';
import { isObjectStoreError } from './types.js';

export interface SignedUrlHandlerOptions {
  store: FilesystemObjectStore;
  /** Largest body a signed PUT may carry: 413 beyond. Default: no limit. */
  maxSize?: number;
  /** Told of unexpected failures (answered 500 without details); a logger, typically. */
  onError?: (err: unknown) => void;
}

export type SignedUrlHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface SignedRequest {
  method: SignedMethod;
  key: string;
  /** The size a PUT URL was issued for: the body may not be larger. */
  size: number | undefined;
}

function reply(res: ServerResponse, status: number, code: string, message: string, close = false): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...(close ? { Connection: 'close' } : {}),
  });
  res.end(body);
}

/** The signature check of a signed URL's query, and the size a PUT URL was issued for. */
function checkQuery(
  store: FilesystemObjectStore,
  method: SignedMethod,
  key: string,
  q: URLSearchParams,
): { check: SignatureCheck; size: number | undefined } {
  const size = q.get('size') ?? undefined;
  const signed = { expires: q.get('expires') ?? '', signature: q.get('signature') ?? '', size };
  const check = q.get('method') === method ? store.checkSignature(method, key, signed) : 'invalid';
  return { check, size: size === undefined ? undefined : Number(size) };
}

/** The key and method of a request whose signature holds, or undefined after answering it. */
function authorize(
  req: IncomingMessage,
  res: ServerResponse,
  store: FilesystemObjectStore,
): SignedRequest | undefined {
  const url = new URL(req.url ?? '/', 'http://storage.invalid');
  if (!url.pathname.startsWith(STORAGE_PATH)) {
    reply(res, 404, 'not_found', 'no such route');
    return undefined;
  }
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  if (method !== 'GET' && method !== 'PUT') {
    res.setHeader('Allow', 'GET, HEAD, PUT');
    reply(res, 405, 'method_not_allowed', 'signed URLs take GET, HEAD or PUT');
    return undefined;
  }
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.slice(STORAGE_PATH.length));
  } catch {
    reply(res, 400, 'invalid_request', 'malformed key');
    return undefined;
  }
  const { check, size } = checkQuery(store, method, key, url.searchParams);
  if (check !== 'valid') {
    reply(res, 403, 'forbidden', check === 'expired' ? 'signed URL expired' : 'invalid signature');
    return undefined;
  }
  return { method, key, size };
}

async function serveGet(
  req: IncomingMessage,
  res: ServerResponse,
  store: FilesystemObjectStore,
  key: string,
): Promise<void> {
  const info = req.method === 'HEAD' ? await store.head(key) : undefined;
  const found = req.method === 'HEAD' ? undefined : await store.get(key);
  const meta = info ?? found?.info;
  if (meta === undefined) {
    reply(res, 404, 'not_found', 'no such object');
    return;
  }
  res.writeHead(200, {
    'Content-Type': meta.contentType,
    'Content-Length': meta.size,
    ETag: meta.etag,
    'Last-Modified': new Date(meta.updatedAt).toUTCString(),
  });
  if (found === undefined) {
    res.end();
    return;
  }
  await pipeline(found.body, res);
}

async function servePut(
  req: IncomingMessage,
  res: ServerResponse,
  options: SignedUrlHandlerOptions,
  signed: SignedRequest,
): Promise<void> {
  const { store } = options;
  const { key } = signed;
  const limits = [options.maxSize, signed.size].filter((limit) => limit !== undefined);
  const maxSize = limits.length === 0 ? undefined : Math.min(...limits);
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (maxSize !== undefined && declared > maxSize) {
    reply(res, 413, 'payload_too_large', `larger than ${maxSize} bytes`, true);
    return;
  }
  // Through a PassThrough, so that a refused body ends the store's pipeline and not the socket,
  // which must stay open long enough to carry the 413.
  const body = new PassThrough();
  req.pipe(body);
  try {
    const info = await store.put(key, body, {
      ...(req.headers['content-type'] === undefined ? {} : { contentType: req.headers['content-type'] }),
      ...(maxSize === undefined ? {} : { maxSize }),
    });
    res.writeHead(200, { ETag: info.etag, 'Content-Length': 0 });
    res.end();
  } catch (err) {
    req.unpipe(body);
    req.resume();
    throw err;
  }
}

/**
 * Serves the signed URLs of a FilesystemObjectStore (`/v1/storage/<key>?method&expires&signature`):
 * PUT streams the body into the store (413 past `maxSize`), GET and HEAD stream the object out.
 * 403 for a bad or expired signature or another method than the one signed; 404 when missing.
 * Framework-free: mount it on a Node server or under an Express route that leaves the body unread.
 */
export function signedUrlHandler(options: SignedUrlHandlerOptions): SignedUrlHandler {
  return async function serveSignedUrl(req, res) {
    const signed = authorize(req, res, options.store);
    if (signed === undefined) return;
    try {
      if (signed.method === 'PUT') await servePut(req, res, options, signed);
      else await serveGet(req, res, options.store, signed.key);
    } catch (err) {
      if (isObjectStoreError(err, 'TooLarge')) reply(res, 413, 'payload_too_large', err.message, true);
      else if (isObjectStoreError(err, 'InvalidKey')) reply(res, 400, 'invalid_request', err.message);
      else if (isObjectStoreError(err, 'Unavailable'))
        reply(res, 503, 'service_unavailable', 'storage unavailable');
      else {
        options.onError?.(err);
        reply(res, 500, 'internal_error', 'internal error');
      }
    }
  };
}
