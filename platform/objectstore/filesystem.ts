import { errnoOf } from '../errno.js';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SizeLimit } from './size-limit.js';
import { z } from 'zod';
import type {
  ByteRange,
  GetResult,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutOptions,
  SignedPutOptions,
  SignedUrl,
} from './types.js';
import {
  compareKeys,
  defaultContentType,
  expiryOf,
  listLimit,
  ObjectStoreError,
  resolveRange,
  validateKey,
  validatePrefix,
} from './types.js';

export interface FilesystemObjectStoreOptions {
  /** Created if missing. Layout: `objects/<key>`, `meta/<key>` (JSON sidecar), `tmp/`. */
  root: string;
  /** Where the API serves `/v1/storage/…` (signed-url-handler.ts), without a trailing slash. */
  baseUrl: string;
  /** HMAC-SHA256 key of signed URLs; at least 32 random bytes. */
  signingSecret: Buffer;
}

export type SignedMethod = 'GET' | 'PUT';
export type SignatureCheck = 'valid' | 'expired' | 'invalid';

/** The URL path under which signed URLs are served; the key follows, URL-encoded as one segment. */
export const STORAGE_PATH = '/v1/storage/';

/** Files open at once while listing: a page of 1000 must not run into the descriptor limit. */
const HEAD_CONCURRENCY = 32;
/** Reads in 1 MiB chunks: with the default 64 KiB, serving a large object over HTTP costs a socket write per 64 KiB. */
const READ_CHUNK_BYTES = 1024 * 1024;

const MetaSchema = z.object({ etag: z.string(), contentType: z.string(), updatedAt: z.string() });
type Meta = z.infer<typeof MetaSchema>;

/** A key whose path is, or runs through, a file of another key (`a` and `a/b`): S3 allows it, a directory cannot. */
const isPathConflict = (err: unknown): boolean =>
  ['ENOTDIR', 'EISDIR', 'EEXIST'].includes(errnoOf(err) ?? '');

const unavailable = (what: string, cause: unknown): ObjectStoreError =>
  cause instanceof ObjectStoreError ? cause : new ObjectStoreError('Unavailable', what, { cause });

/**
 * The embedded object store: one directory. A put streams into `tmp/` and renames into place, so a
 * reader never sees half an object; the sidecar is renamed into place first, and the data file is
 * what makes an object exist (a crash between the two leaves an invisible sidecar, overwritten by
 * the next put). During an overwrite a reader may briefly pair the new sidecar with the old bytes;
 * sizes always come from the bytes themselves.
 */
export class FilesystemObjectStore implements ObjectStore {
  private readonly objects: string;
  private readonly meta: string;
  private readonly tmp: string;
  private readonly baseUrl: string;
  private readonly secret: Buffer;

  constructor(options: FilesystemObjectStoreOptions) {
    const root = resolve(options.root);
    this.objects = join(root, 'objects');
    this.meta = join(root, 'meta');
    this.tmp = join(root, 'tmp');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.secret = options.signingSecret;
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
    const temp = join(this.tmp, randomBytes(12).toString('hex'));
    try {
      await mkdir(this.tmp, { recursive: true, mode: 0o700 });
      const meter = new SizeLimit(maxSize, `object ${key}`, { md5: true });
      await pipeline(
        Buffer.isBuffer(body) ? Readable.from([body]) : body,
        meter,
        createWriteStream(temp, { flags: 'wx', mode: 0o600 }),
      );
      await syncFile(temp);
      const meta: Meta = {
        etag: meter.etag(),
        contentType: options.contentType ?? defaultContentType(key),
        updatedAt: new Date().toISOString(),
      };
      await this.place(key, temp, meta);
      return { key, size: meter.bytes, ...meta };
    } catch (err) {
      await rm(temp, { force: true });
      if (isPathConflict(err)) {
        throw new ObjectStoreError('InvalidKey', `object key ${key} conflicts with another key's path`, {
          cause: err,
        });
      }
      throw unavailable(`writing object ${key}`, err);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    validateKey(key);
    const handle = await this.openObject(key);
    if (handle === undefined) return undefined;
    try {
      return await this.infoOf(key, handle);
    } finally {
      await handle.close();
    }
  }

  async get(key: string, options: { range?: ByteRange } = {}): Promise<GetResult | undefined> {
    validateKey(key);
    const handle = await this.openObject(key);
    if (handle === undefined) return undefined;
    try {
      const info = await this.infoOf(key, handle);
      if (options.range === undefined)
        return { info, body: handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }) };
      const range = resolveRange(options.range, info.size);
      return { info, body: handle.createReadStream({ ...range, highWaterMark: READ_CHUNK_BYTES }), range };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async list(prefix: string, options: { limit?: number; startAfter?: string } = {}): Promise<ListPage> {
    validatePrefix(prefix);
    const limit = listLimit(options.limit);
    const { startAfter } = options;
    const keys = (await this.keysUnder(prefix.slice(0, prefix.lastIndexOf('/') + 1)))
      .filter((k) => k.startsWith(prefix) && (startAfter === undefined || compareKeys(k, startAfter) > 0))
      .sort(compareKeys);
    const page = keys.slice(0, limit);
    const infos: (ObjectInfo | undefined)[] = [];
    for (let i = 0; i < page.length; i += HEAD_CONCURRENCY) {
      infos.push(...(await Promise.all(page.slice(i, i + HEAD_CONCURRENCY).map((k) => this.head(k)))));
    }
    const items = infos.filter((info): info is ObjectInfo => info !== undefined);
    const last = page.at(-1);
    return keys.length > limit && last !== undefined ? { items, nextStartAfter: last } : { items };
  }

  async delete(key: string): Promise<boolean> {
    validateKey(key);
    try {
      await unlink(this.pathIn(this.objects, key));
    } catch (err) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR', 'EPERM'].includes(errnoOf(err) ?? '')) return false;
      throw unavailable(`deleting object ${key}`, err);
    }
    await rm(this.pathIn(this.meta, key), { force: true });
    await this.prune(this.objects, key);
    await this.prune(this.meta, key);
    return true;
  }

  async deletePrefix(prefix: string): Promise<number> {
    validatePrefix(prefix);
    let deleted = 0;
    for (;;) {
      const { items } = await this.list(prefix);
      if (items.length === 0) return deleted;
      const results = await Promise.all(items.map((item) => this.delete(item.key)));
      deleted += results.filter(Boolean).length;
    }
  }

  signedPutUrl(key: string, options: SignedPutOptions): Promise<SignedUrl> {
    // The content type is not part of the signature: the uploader's Content-Type header is stored.
    // A declared size is (the handler refuses a larger body).
    return Promise.resolve().then(() => this.signedUrl('PUT', key, options.expiresInSeconds, options.size));
  }

  signedGetUrl(key: string, options: { expiresInSeconds: number }): Promise<SignedUrl> {
    return Promise.resolve().then(() => this.signedUrl('GET', key, options.expiresInSeconds));
  }

  /** Checks a signed URL's parameters in constant time; the handler answers 403 unless valid. */
  checkSignature(
    method: SignedMethod,
    key: string,
    signed: { expires: string; signature: string; size?: string | undefined },
    now = Date.now(),
  ): SignatureCheck {
    const { expires, signature, size } = signed;
    if (!/^\d{1,12}$/.test(expires)) return 'invalid';
    if (size !== undefined && !/^\d{1,15}$/.test(size)) return 'invalid';
    const expected = Buffer.from(
      this.sign(method, key, Number(expires), size === undefined ? undefined : Number(size)),
    );
    const presented = Buffer.from(signature);
    if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return 'invalid';
    return Number(expires) * 1000 < now ? 'expired' : 'valid';
  }

  private signedUrl(method: SignedMethod, key: string, expiresInSeconds: number, size?: number): SignedUrl {
    validateKey(key);
    const { expires, expiresAt } = expiryOf(expiresInSeconds);
    const query = new URLSearchParams({
      method,
      expires: String(expires),
      ...(size === undefined ? {} : { size: String(size) }),
      signature: this.sign(method, key, expires, size),
    });
    return { url: `${this.baseUrl}${STORAGE_PATH}${encodeURIComponent(key)}?${query.toString()}`, expiresAt };
  }

  private sign(method: SignedMethod, key: string, expires: number, size?: number): string {
    // Without a size the signed text is what it was before sizes existed: issued URLs stay valid.
    const text = `${method}\n${key}\n${expires}${size === undefined ? '' : `\n${size}`}`;
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  /** `tree/<key>`, checked to stay under `tree` (validateKey already rules out `..`). */
  private pathIn(tree: string, key: string): string {
    const path = resolve(tree, key);
    if (!path.startsWith(tree + sep))
      throw new ObjectStoreError('InvalidKey', `object key ${key} escapes the store`);
    return path;
  }

  private async place(key: string, temp: string, meta: Meta): Promise<void> {
    const target = this.pathIn(this.objects, key);
    const metaPath = this.pathIn(this.meta, key);
    const metaTemp = `${temp}.meta`;
    await writeFile(metaTemp, JSON.stringify(meta), { flag: 'wx', mode: 0o600 });
    try {
      await mkdir(dirname(metaPath), { recursive: true, mode: 0o700 });
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await rename(metaTemp, metaPath);
    } finally {
      await rm(metaTemp, { force: true });
    }
    await rename(temp, target);
  }

  private async openObject(key: string): Promise<FileHandle | undefined> {
    try {
      const handle = await open(this.pathIn(this.objects, key), 'r');
      if ((await handle.stat()).isFile()) return handle;
      await handle.close();
      return undefined;
    } catch (err) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoOf(err) ?? '')) return undefined;
      throw unavailable(`opening object ${key}`, err);
    }
  }

  private async infoOf(key: string, handle: FileHandle): Promise<ObjectInfo> {
    const { size, mtime } = await handle.stat();
    const meta = await this.readMeta(key);
    if (meta !== undefined) return { key, size, ...meta };
    // No sidecar (written by hand, or damaged): derive what it would have said.
    const etag = await md5Of(this.pathIn(this.objects, key));
    return { key, size, etag, contentType: defaultContentType(key), updatedAt: mtime.toISOString() };
  }

  private async readMeta(key: string): Promise<Meta | undefined> {
    try {
      const parsed = MetaSchema.safeParse(JSON.parse(await readFile(this.pathIn(this.meta, key), 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every key under a directory prefix (`""` or ending in `/`), unordered. */
  private async keysUnder(dirPrefix: string): Promise<string[]> {
    const keys: string[] = [];
    const pending = [dirPrefix];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      const entries = await readdir(join(this.objects, dir), { withFileTypes: true }).catch(
        (err: unknown) => {
          if (['ENOENT', 'ENOTDIR'].includes(errnoOf(err) ?? '')) return [];
          throw unavailable(`listing ${dir}`, err);
        },
      );
      for (const entry of entries) {
        if (entry.isDirectory()) pending.push(`${dir}${entry.name}/`);
        else if (entry.isFile()) keys.push(`${dir}${entry.name}`);
      }
    }
    return keys;
  }

  /** Removes the directories a deleted key leaves empty, up to (not including) the tree. */
  private async prune(tree: string, key: string): Promise<void> {
    for (let dir = dirname(this.pathIn(tree, key)); dir.startsWith(tree + sep); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty (or already gone): its parents are not empty either
      }
    }
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function md5Of(path: string): Promise<string> {
  const hash = createHash('md5');
  await pipeline(createReadStream(path), hash);
  return `"${hash.digest('hex')}"`;
}
