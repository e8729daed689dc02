import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { GetObjectCommandOutput, HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SizeLimit } from './size-limit.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type {
  ByteRange,
  DownloadHeaders,
  DownloadUrlSigner,
  GetResult,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutOptions,
  SignedPutOptions,
  SignedUrl,
} from './types.js';
import {
  defaultContentType,
  expiryOf,
  listLimit,
  OCTET_STREAM,
  ObjectStoreError,
  resolveRange,
  validateKey,
  validatePrefix,
} from './types.js';

export interface S3ObjectStoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible service (MinIO, moto); omitted: AWS. */
  endpoint?: string;
  /** Bucket in the path rather than the host name; most S3-compatible services need it. */
  forcePathStyle?: boolean;
  /** Omitted: the SDK's default chain (environment, IRSA, instance profile). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /**
   * How long a call may go without a byte of answer (the socket's idle time, so a long download
   * that keeps flowing is fine). The SDK has no bound by default: a silent endpoint would hold an
   * API request for ever.
   */
  requestTimeoutMs?: number;
}

/** Connecting to the endpoint, and then going silent mid-call (see requestTimeoutMs). */
const CONNECTION_TIMEOUT_MS = 5_000;
const SILENCE_TIMEOUT_MS = 30_000;

/** S3's own maximum per DeleteObjects call. */
const DELETE_BATCH = 1000;
/** HeadObject calls in flight while listing (ListObjectsV2 does not return content types). */
const HEAD_CONCURRENCY = 16;

const errorName = (err: unknown): string | undefined => (err instanceof Error ? err.name : undefined);

const httpStatus = (err: unknown): number | undefined => {
  if (typeof err !== 'object' || err === null || !('$metadata' in err)) return undefined;
  const meta = err.$metadata;
  return typeof meta === 'object' &&
    meta !== null &&
    'httpStatusCode' in meta &&
    typeof meta.httpStatusCode === 'number'
    ? meta.httpStatusCode
    : undefined;
};

/** A missing object (not a missing bucket, which is a misconfiguration: Unavailable). */
const isMissing = (err: unknown): boolean => ['NoSuchKey', 'NotFound'].includes(errorName(err) ?? '');

const unavailable = (what: string, cause: unknown): ObjectStoreError =>
  cause instanceof ObjectStoreError ? cause : new ObjectStoreError('Unavailable', what, { cause });

const infoOf = (
  key: string,
  out: HeadObjectCommandOutput | GetObjectCommandOutput,
  size: number,
): ObjectInfo => ({
  key,
  size,
  etag: out.ETag ?? '""',
  contentType: out.ContentType ?? OCTET_STREAM,
  updatedAt: (out.LastModified ?? new Date(0)).toISOString(),
});

/** `bytes 0-9/100` → the range and the object's size. */
function parseContentRange(
  header: string | undefined,
): { start: number; end: number; size: number } | undefined {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '');
  if (match === null) return undefined;
  return { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
}

/**
 * Object storage on S3 or an S3-compatible service. A put streams through `Upload` (multipart past
 * 5 MiB) and counts bytes on the way: past `maxSize` the upload is aborted before it completes, so
 * no object appears and an existing one under the key is left as it was.
 */
export class S3ObjectStore implements ObjectStore, DownloadUrlSigner {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3ObjectStoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.forcePathStyle === undefined ? {} : { forcePathStyle: options.forcePathStyle }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      requestHandler: {
        connectionTimeout: Math.min(CONNECTION_TIMEOUT_MS, options.requestTimeoutMs ?? CONNECTION_TIMEOUT_MS),
        socketTimeout: options.requestTimeoutMs ?? SILENCE_TIMEOUT_MS,
      },
    });
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }

  async put(
    key: string,
    body: NodeJS.ReadableStream | Buffer,
    options: PutOptions = {},
  ): Promise<ObjectInfo> {
    validateKey(key);
    const { maxSize } = options;
    if (Buffer.isBuffer(body) && maxSize !== undefined && body.length > maxSize) {
      throw new ObjectStoreError('TooLarge', `object ${key} is larger than ${maxSize} bytes`);
    }
    await this.upload(key, body, options.contentType ?? defaultContentType(key), maxSize);
    const info = await this.head(key);
    if (info === undefined)
      throw new ObjectStoreError('Unavailable', `object ${key} vanished after its upload`);
    return info;
  }

  private async upload(
    key: string,
    body: NodeJS.ReadableStream | Buffer,
    contentType: string,
    maxSize: number | undefined,
  ): Promise<void> {
    const counter = new SizeLimit(maxSize, `object ${key}`);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: Buffer.isBuffer(body) ? body : counter,
        ContentType: contentType,
      },
      leavePartsOnError: false,
    });
    // A failed body (or one past maxSize) fails the stream Upload reads, and Upload then aborts the
    // multipart upload before done() settles. Not upload.abort(): done() would reject at once and
    // leave the started multipart upload behind. A failed upload ends the body (or it would wait forever).
    const feeding = Buffer.isBuffer(body) ? Promise.resolve() : pipeline(body, counter);
    const uploading = upload.done().catch((err: unknown) => {
      counter.destroy();
      throw err;
    });
    const [fed, uploaded] = await Promise.allSettled([feeding, uploading]);
    if (counter.exceeded)
      throw new ObjectStoreError('TooLarge', `object ${key} is larger than ${maxSize ?? 0} bytes`);
    if (fed.status === 'rejected') throw unavailable(`reading the body of object ${key}`, fed.reason);
    if (uploaded.status === 'rejected') throw unavailable(`uploading object ${key}`, uploaded.reason);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    validateKey(key);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return infoOf(key, out, out.ContentLength ?? 0);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw unavailable(`reading metadata of object ${key}`, err);
    }
  }

  async get(key: string, options: { range?: ByteRange } = {}): Promise<GetResult | undefined> {
    validateKey(key);
    const { range } = options;
    if (range !== undefined) resolveRange(range, Number.MAX_SAFE_INTEGER); // shape only; S3 checks the size
    const out = await this.getObject(key, range);
    if (out === undefined) return undefined;
    if (!(out.Body instanceof Readable))
      throw new ObjectStoreError('Unavailable', `object ${key}: no body stream`);
    const returned = range === undefined ? undefined : parseContentRange(out.ContentRange);
    if (returned === undefined) return { info: infoOf(key, out, out.ContentLength ?? 0), body: out.Body };
    return {
      info: infoOf(key, out, returned.size),
      body: out.Body,
      range: { start: returned.start, end: returned.end },
    };
  }

  private async getObject(
    key: string,
    range: ByteRange | undefined,
  ): Promise<GetObjectCommandOutput | undefined> {
    try {
      return await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end ?? ''}` }),
        }),
      );
    } catch (err) {
      if (isMissing(err)) return undefined;
      if (errorName(err) === 'InvalidRange' || httpStatus(err) === 416) {
        throw new ObjectStoreError('InvalidRange', `range not satisfiable for object ${key}`, { cause: err });
      }
      throw unavailable(`reading object ${key}`, err);
    }
  }

  async list(prefix: string, options: { limit?: number; startAfter?: string } = {}): Promise<ListPage> {
    validatePrefix(prefix);
    const { keys, truncated } = await this.listKeys(prefix, listLimit(options.limit), options.startAfter);
    const infos: (ObjectInfo | undefined)[] = [];
    for (let i = 0; i < keys.length; i += HEAD_CONCURRENCY) {
      infos.push(...(await Promise.all(keys.slice(i, i + HEAD_CONCURRENCY).map((k) => this.head(k)))));
    }
    const items = infos.filter((info): info is ObjectInfo => info !== undefined);
    const last = keys.at(-1);
    return truncated && last !== undefined ? { items, nextStartAfter: last } : { items };
  }

  async delete(key: string): Promise<boolean> {
    // S3 answers a delete of a missing key as it does any other: ask first.
    if ((await this.head(key)) === undefined) return false;
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      throw unavailable(`deleting object ${key}`, err);
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    validatePrefix(prefix);
    let deleted = 0;
    for (;;) {
      const { keys } = await this.listKeys(prefix, DELETE_BATCH, undefined);
      if (keys.length === 0) return deleted;
      deleted += await this.deleteBatch(keys);
    }
  }

  async signedPutUrl(key: string, options: SignedPutOptions): Promise<SignedUrl> {
    validateKey(key);
    // A declared size is signed (Content-Length is a signed header: S3 refuses another length);
    // the content type is not, so a client that sends none still succeeds.
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentType: options.contentType ?? defaultContentType(key),
      ...(options.size === undefined ? {} : { ContentLength: options.size }),
    });
    return this.presign(command, options.expiresInSeconds);
  }

  async signedGetUrl(key: string, options: { expiresInSeconds: number }): Promise<SignedUrl> {
    validateKey(key);
    return this.presign(new GetObjectCommand({ Bucket: this.bucket, Key: key }), options.expiresInSeconds);
  }

  /** A GET URL whose response carries `headers` (signed into the URL, so a client cannot change them). */
  async signedDownloadUrl(
    key: string,
    options: { expiresInSeconds: number; headers: DownloadHeaders },
  ): Promise<SignedUrl> {
    validateKey(key);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: options.headers.contentDisposition,
      ResponseCacheControl: options.headers.cacheControl,
    });
    return this.presign(command, options.expiresInSeconds);
  }

  private async presign(
    command: PutObjectCommand | GetObjectCommand,
    expiresInSeconds: number,
  ): Promise<SignedUrl> {
    const { expiresAt } = expiryOf(expiresInSeconds);
    try {
      return { url: await getSignedUrl(this.client, command, { expiresIn: expiresInSeconds }), expiresAt };
    } catch (err) {
      throw unavailable('signing a URL', err);
    }
  }

  private async listKeys(
    prefix: string,
    limit: number,
    startAfter: string | undefined,
  ): Promise<{ keys: string[]; truncated: boolean }> {
    try {
      const out = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          MaxKeys: limit,
          ...(startAfter === undefined ? {} : { StartAfter: startAfter }),
        }),
      );
      const keys = (out.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [o.Key]));
      return { keys, truncated: out.IsTruncated === true };
    } catch (err) {
      throw unavailable(`listing ${prefix}`, err);
    }
  }

  private async deleteBatch(keys: string[]): Promise<number> {
    let out;
    try {
      out = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    } catch (err) {
      throw unavailable(`deleting ${keys.length} objects`, err);
    }
    const failed = out.Errors ?? [];
    if (failed.length > 0) {
      const first = failed[0];
      throw new ObjectStoreError(
        'Unavailable',
        `deleting ${failed.length} of ${keys.length} objects failed: ${first?.Code ?? '?'} ${first?.Key ?? ''}`,
      );
    }
    return keys.length;
  }
}
