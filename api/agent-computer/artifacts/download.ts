import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { DownloadUrlSigner, ObjectInfo, ObjectStore } from '../../../platform/objectstore/types.js';
import { isObjectStoreError } from '../../../platform/objectstore/types.js';
import { ApiError } from '../../errors.js';

/** What a `Range` header asks of an object of a known size (RFC 9110 §14). */
export type RangeRequest =
  { kind: 'whole' } | { kind: 'part'; start: number; end: number } | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * One byte range: `a-b`, `a-` or `-n` (the last n bytes). Anything else (several ranges, another
 * unit, garbage) is ignored and the whole object served, as RFC 9110 allows; a range that starts at
 * or beyond the end, or a zero-length suffix, is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  const match = header === undefined ? null : SINGLE_RANGE.exec(header.trim());
  const [, first = '', last = ''] = match ?? [];
  if (first === '' && last === '') return { kind: 'whole' };
  return first === '' ? suffixRange(Number(last), size) : boundedRange(Number(first), last, size);
}

/** `-n`: the last n bytes (all of them when n exceeds the size). */
function suffixRange(suffix: number, size: number): RangeRequest {
  if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
  return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 };
}

/** `a-b` or `a-`: the end is clamped to the last byte; an end before the start is invalid (ignored). */
function boundedRange(start: number, last: string, size: number): RangeRequest {
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/** If-None-Match (weak comparison, RFC 9110 §13.1.2): `*`, or a list naming the current ETag. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const current = opaque(etag);
  return header.split(',').some((tag) => opaque(tag) === current);
}

/** `attachment` with the last path segment: an ASCII fallback and the exact name (RFC 6266, RFC 8187). */
export function contentDisposition(filename: string): string {
  const base = filename.slice(filename.lastIndexOf('/') + 1);
  const ascii = base.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(base).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** What a download response says besides its type and length; a redirect has S3 send the same. */
const CACHE_CONTROL = 'private, no-cache';

function baseHeaders(info: ObjectInfo, filename: string): OutgoingHttpHeaders {
  return {
    ETag: info.etag,
    'Last-Modified': new Date(info.updatedAt).toUTCString(),
    'Accept-Ranges': 'bytes',
    // Artifacts are whatever an agent wrote (HTML included): never rendered in the API's origin.
    'Content-Disposition': contentDisposition(filename),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': CACHE_CONTROL,
  };
}

/**
 * How long a download redirect's presigned URL stays valid: long enough for a client to follow it
 * (and for modest clock skew between the API and S3), short enough that a leaked one soon dies. S3
 * checks it when the GET starts, so a long download is not cut off.
 */
export const DOWNLOAD_URL_TTL_SECONDS = 300;

export interface SendObjectOptions {
  objectStore: ObjectStore;
  key: string;
  filename: string;
  /** When set, a GET that would carry bytes is answered 307 to a presigned URL of this store instead. */
  redirectTo?: DownloadUrlSigner | undefined;
  /** Told when the body fails after the headers went out (not when the client went away). */
  onStreamError?: (err: unknown) => void;
}

/**
 * Streams one object to the response: 200, 206 for a satisfiable range, 416 otherwise, 304 when
 * If-None-Match names its ETag. The body goes from the store to the socket through a pipeline, so
 * memory stays bounded by the streams' buffers whatever the object's size. With `redirectTo`, the
 * API still answers 404, 304, 416 and HEAD itself (one HEAD to the store), and sends the client to
 * the store for the bytes: its Range header goes along and S3 answers it.
 */
export async function sendObject(
  req: IncomingMessage,
  res: ServerResponse,
  options: SendObjectOptions,
): Promise<void> {
  const conditional = req.headers.range !== undefined || req.headers['if-none-match'] !== undefined;
  // A plain streamed GET costs one call to the store; HEAD, conditional requests and redirects look first.
  if (!conditional && req.method !== 'HEAD' && options.redirectTo === undefined) {
    await streamObject(res, { ...options, range: undefined });
    return;
  }
  const info = await options.objectStore.head(options.key);
  if (info === undefined) throw ApiError.notFound('Artifact');
  const range = answerWithoutBody(req, res, info, options.filename);
  if (range === 'answered') return;
  if (options.redirectTo !== undefined) {
    await redirectToStore(res, options.redirectTo, options);
    return;
  }
  await streamObject(res, { ...options, range: range.kind === 'part' ? range : undefined });
}

/** 304, 416 and HEAD need no bytes: answers them and says so; otherwise the range to send. */
function answerWithoutBody(
  req: IncomingMessage,
  res: ServerResponse,
  info: ObjectInfo,
  filename: string,
): Exclude<RangeRequest, { kind: 'unsatisfiable' }> | 'answered' {
  if (matchesIfNoneMatch(req.headers['if-none-match'], info.etag)) {
    res.writeHead(304, baseHeaders(info, filename));
    res.end();
    return 'answered';
  }
  const range = parseRange(req.headers.range, info.size);
  if (range.kind === 'unsatisfiable') {
    unsatisfiable(res, info.size);
    return 'answered';
  }
  if (req.method !== 'HEAD') return range;
  res.writeHead(200, {
    ...baseHeaders(info, filename),
    'Content-Type': info.contentType,
    'Content-Length': info.size,
  });
  res.end();
  return 'answered';
}

async function redirectToStore(
  res: ServerResponse,
  store: DownloadUrlSigner,
  options: { key: string; filename: string },
): Promise<void> {
  const signed = await store.signedDownloadUrl(options.key, {
    expiresInSeconds: DOWNLOAD_URL_TTL_SECONDS,
    headers: { contentDisposition: contentDisposition(options.filename), cacheControl: CACHE_CONTROL },
  });
  // 307: the client repeats the same GET (Range included) there. The URL is a credential: never cached.
  res.writeHead(307, { Location: signed.url, 'Cache-Control': 'no-store', 'Content-Length': 0 });
  res.end();
}

function unsatisfiable(res: ServerResponse, size: number): void {
  const body = JSON.stringify({
    error: { code: 'range_not_satisfiable', message: `The range is outside the artifact's ${size} bytes` },
  });
  res.writeHead(416, {
    'Content-Range': `bytes */${size}`,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function streamObject(
  res: ServerResponse,
  options: {
    objectStore: ObjectStore;
    key: string;
    filename: string;
    range: { start: number; end: number } | undefined;
    onStreamError?: (err: unknown) => void;
  },
): Promise<void> {
  const { objectStore, key, range } = options;
  let got;
  try {
    got = await objectStore.get(key, range === undefined ? {} : { range });
  } catch (err) {
    if (!isObjectStoreError(err, 'InvalidRange')) throw err;
    // The object shrank between the look and the read: answer for its size now.
    const now = await objectStore.head(key);
    if (now === undefined) throw ApiError.notFound('Artifact');
    unsatisfiable(res, now.size);
    return;
  }
  if (got === undefined) throw ApiError.notFound('Artifact');
  const headers: OutgoingHttpHeaders = {
    ...baseHeaders(got.info, options.filename),
    'Content-Type': got.info.contentType,
  };
  if (got.range === undefined) {
    res.writeHead(200, { ...headers, 'Content-Length': got.info.size });
  } else {
    res.writeHead(206, {
      ...headers,
      'Content-Length': got.range.end - got.range.start + 1,
      'Content-Range': `bytes ${got.range.start}-${got.range.end}/${got.info.size}`,
    });
  }
  try {
    await pipeline(got.body, res);
  } catch (err) {
    // The headers are out, so the only signal left to the client is the connection closing, which
    // pipeline has done. A client that went away is routine; a store failing mid-stream is worth a log.
    if (!isPrematureClose(err)) options.onStreamError?.(err);
  }
}

const isPrematureClose = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && 'code' in err && err.code === 'ERR_STREAM_PREMATURE_CLOSE';
