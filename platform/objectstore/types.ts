import { extname } from 'node:path';

/** What a store knows about one object. */
export interface ObjectInfo {
  key: string;
  size: number;
  /** Quoted, like S3's (`"<md5 hex>"` for a single-part upload). */
  etag: string;
  contentType: string;
  /** ISO 8601 with milliseconds. */
  updatedAt: string;
}

/**
 * Why an object store call failed. `InvalidRange`: a range that starts at or beyond the object's
 * end (HTTP 416); a range whose end lies beyond the object is clamped, as HTTP does.
 */
export type ObjectStoreErrorReason = 'NotFound' | 'InvalidKey' | 'InvalidRange' | 'TooLarge' | 'Unavailable';

/** The one error an object store throws; check `reason`, never the message. */
export class ObjectStoreError extends Error {
  constructor(
    readonly reason: ObjectStoreErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ObjectStoreError';
  }
}

export const isObjectStoreError = (err: unknown, reason?: ObjectStoreErrorReason): err is ObjectStoreError =>
  err instanceof ObjectStoreError && (reason === undefined || err.reason === reason);

export interface PutOptions {
  /** Default: from the key's extension (see `defaultContentType`). */
  contentType?: string;
  /** Bytes; a larger body fails with TooLarge and leaves nothing behind. */
  maxSize?: number;
}

/** Inclusive byte range, like HTTP's; an open end means "to the end of the object". */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface GetResult {
  info: ObjectInfo;
  body: NodeJS.ReadableStream;
  /** Present when a range was asked for: the bytes actually returned (end clamped to the size). */
  range?: { start: number; end: number };
}

export interface ListPage {
  items: ObjectInfo[];
  /** Present when more keys follow: pass it back as `startAfter`. */
  nextStartAfter?: string;
}

export interface SignedPutOptions {
  expiresInSeconds: number;
  contentType?: string | undefined;
  /** The size the uploader declared. */
  size?: number | undefined;
}

export interface SignedUrl {
  url: string;
  expiresAt: string;
}

/**
 * Object storage for uploaded files, artifacts and archived event logs. Two implementations (a
 * directory, S3) pass the same conformance suite (test/contracts/object-store.contract.ts). Every
 * key goes through `validateKey` first: an invalid key fails with InvalidKey before any I/O.
 */
export interface ObjectStore {
  /** Streams body to storage (never buffers a whole file); refuses beyond maxSize with TooLarge and leaves nothing behind. */
  put(key: string, body: NodeJS.ReadableStream | Buffer, options?: PutOptions): Promise<ObjectInfo>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Inclusive byte range like HTTP's; undefined when missing; InvalidRange when start ≥ size. */
  get(key: string, options?: { range?: ByteRange }): Promise<GetResult | undefined>;
  /** Keys under prefix in key order (UTF-8 byte order, as S3's), `limit` (default 1000) after `startAfter`. */
  list(prefix: string, options?: { limit?: number; startAfter?: string }): Promise<ListPage>;
  /** True when the object existed. */
  delete(key: string): Promise<boolean>;
  /** How many objects were deleted. */
  deletePrefix(prefix: string): Promise<number>;
  /** URLs a client uses without an API key; valid until expiresAt. */
  /**
   * With `size`, the URL accepts a body of at most that many bytes (S3 signs it as the exact
   * Content-Length; the directory store refuses a larger body with 413).
   */
  signedPutUrl(key: string, options: SignedPutOptions): Promise<SignedUrl>;
  signedGetUrl(key: string, options: { expiresInSeconds: number }): Promise<SignedUrl>;
}

/** The response headers a presigned download makes the store send (S3's `response-*` overrides). */
export interface DownloadHeaders {
  contentDisposition: string;
  cacheControl: string;
}

/**
 * A store clients can download from themselves with a presigned URL (S3): the API can redirect
 * there, so the bytes never pass through it. The directory store is not one (its URLs are the API).
 */
export interface DownloadUrlSigner {
  signedDownloadUrl(
    key: string,
    options: { expiresInSeconds: number; headers: DownloadHeaders },
  ): Promise<SignedUrl>;
}

export const DEFAULT_LIST_LIMIT = 1000;
const MAX_KEY_BYTES = 1024;
// eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
const CONTROL = /[\u0000-\u001f\u007f]/;
// With the u flag a surrogate class matches only unpaired halves, which UTF-8 cannot encode.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** Throws InvalidKey unless `key` is a relative `/`-separated path of at most 1024 UTF-8 bytes. */
export function validateKey(key: string): void {
  const reject = (why: string): never => {
    throw new ObjectStoreError('InvalidKey', `invalid object key ${JSON.stringify(key)}: ${why}`);
  };
  if (key.length === 0) reject('empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) reject(`longer than ${MAX_KEY_BYTES} bytes`);
  if (key.startsWith('/')) reject('absolute');
  if (key.includes('\\')) reject('backslash');
  if (CONTROL.test(key)) reject('control character');
  if (LONE_SURROGATE.test(key)) reject('lone surrogate');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') reject(`segment "${segment}"`);
  }
}

/** Prefixes follow the key rules, except that empty is allowed and a trailing `/` is expected. */
export function validatePrefix(prefix: string): void {
  if (prefix === '') return;
  validateKey(prefix.endsWith('/') ? `${prefix}x` : prefix);
}

/** Page sizes: a positive integer, at most the default (S3's own maximum). */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`list limit must be a positive integer, got ${limit}`);
  }
  return Math.min(limit, DEFAULT_LIST_LIMIT);
}

/**
 * Checks a range against an object's size; returns the inclusive range to read (end clamped).
 * Throws InvalidRange when it starts at or beyond the end, or ends before it starts.
 */
export function resolveRange(range: ByteRange, size: number): { start: number; end: number } {
  const { start, end } = range;
  const bad =
    !Number.isInteger(start) || start < 0 || (end !== undefined && (!Number.isInteger(end) || end < start));
  if (bad || start >= size) {
    throw new ObjectStoreError(
      'InvalidRange',
      `range ${start}-${end ?? ''} not satisfiable for ${size} bytes`,
    );
  }
  return { start, end: Math.min(end ?? size - 1, size - 1) };
}

export const OCTET_STREAM = 'application/octet-stream';

const TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.jsonl': 'application/jsonl',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/** The content type of a key without an explicit one: from its extension, else octet-stream. */
export const defaultContentType = (key: string): string => TYPES[extname(key).toLowerCase()] ?? OCTET_STREAM;

/** Compares keys in UTF-8 byte order: S3's list order, which differs from UTF-16 `<` for astral characters. */
export const compareKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Signed URL lifetimes: whole seconds, 1 s to 7 days (S3's maximum). */
export function expiryOf(expiresInSeconds: number, now = Date.now()): { expires: number; expiresAt: string } {
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > 7 * 24 * 3600) {
    throw new RangeError(`expiresInSeconds must be 1..604800, got ${expiresInSeconds}`);
  }
  const expires = Math.floor(now / 1000) + expiresInSeconds;
  return { expires, expiresAt: new Date(expires * 1000).toISOString() };
}

/** Every object under a prefix, through all of the store's pages (in key order). */
export async function listAllObjects(store: ObjectStore, prefix: string): Promise<ObjectInfo[]> {
  const all: ObjectInfo[] = [];
  let startAfter: string | undefined;
  do {
    const page = await store.list(prefix, startAfter === undefined ? {} : { startAfter });
    all.push(...page.items);
    startAfter = page.nextStartAfter;
  } while (startAfter !== undefined);
  return all;
}
