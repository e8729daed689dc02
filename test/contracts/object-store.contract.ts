/**
 * The object store conformance suite: what every ObjectStore (a directory, S3) guarantees. It uses
 * nothing but the ObjectStore interface and `fetch` for signed URLs, so it runs unchanged against
 * the filesystem store behind its signed-URL handler and against S3 (moto in the cluster project).
 *
 * Every test writes under a prefix of its own (`run-<random>/`), so tests do not see each other in
 * a shared bucket; a store's keys are expected to all carry such a prefix (the invalid-key test
 * checks that nothing else appeared).
 *
 * Ranges, decided: an end beyond the object is clamped to its last byte (as HTTP does); a start at
 * or beyond the end fails with InvalidRange (HTTP's 416).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ObjectInfo, ObjectStore, ObjectStoreErrorReason } from '../../platform/objectstore/types.js';
import { ObjectStoreError } from '../../platform/objectstore/types.js';

export interface ObjectStoreFixture {
  store: ObjectStore;
  cleanup(): Promise<void>;
}

const MiB = 1024 * 1024;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const md5Etag = (bytes: Buffer): string => `"${createHash('md5').update(bytes).digest('hex')}"`;

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** `size` deterministic bytes in 64 KiB chunks, generated as read: never held whole. */
function generated(size: number): Readable {
  const chunk = 64 * 1024;
  return Readable.from(
    (function* () {
      for (let offset = 0; offset < size; offset += chunk) {
        const length = Math.min(chunk, size - offset);
        yield Buffer.alloc(length, (offset / chunk) % 251);
      }
    })(),
  );
}

async function md5OfStream(stream: NodeJS.ReadableStream): Promise<{ etag: string; size: number }> {
  const hash = createHash('md5');
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    hash.update(bytes);
  }
  return { etag: `"${hash.digest('hex')}"`, size };
}

async function failure(call: Promise<unknown>, reason: ObjectStoreErrorReason): Promise<ObjectStoreError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome))
    throw new Error(`expected an ObjectStoreError ${reason}, but the call succeeded`);
  if (!(outcome.error instanceof ObjectStoreError)) throw outcome.error;
  expect(outcome.error.reason).toBe(reason);
  return outcome.error;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ObjectStoreContractOptions {
  /**
   * A backend that does not check the expiry of signed URLs (moto 5.2.1 ignores X-Amz-Expires):
   * the expiry test then says so in its name and pins the actual behaviour, so that a fixed
   * backend fails it and the option can go. Real S3 refuses them (403 "Request has expired").
   */
  expiryNotEnforced?: string;
  /** Likewise for a backend that does not check a signed Content-Length (moto checks no signature). */
  declaredSizeNotEnforced?: string;
}

export function objectStoreContract(
  name: string,
  makeStore: () => Promise<ObjectStoreFixture>,
  options: ObjectStoreContractOptions = {},
): void {
  describe(`${name} conforms to the object store contract`, () => {
    let fixture: ObjectStoreFixture;
    let store: ObjectStore;
    let p: string;

    beforeAll(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterAll(async () => {
      await fixture.cleanup();
    });
    beforeEach(() => {
      p = `run-${randomBytes(5).toString('hex')}/`;
    });

    const keysOf = (items: ObjectInfo[]): string[] => items.map((i) => i.key);

    it('round-trips an object: put, head and get agree on size, quoted MD5 etag and content type', async () => {
      const bytes = Buffer.from('hello, object store\n');
      const info = await store.put(`${p}notes/a.txt`, bytes);
      expect(info).toEqual({
        key: `${p}notes/a.txt`,
        size: bytes.length,
        etag: md5Etag(bytes),
        contentType: 'text/plain; charset=utf-8',
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(await store.head(`${p}notes/a.txt`)).toEqual(info);
      const got = await store.get(`${p}notes/a.txt`);
      expect(got?.info).toEqual(info);
      expect(got?.range).toBeUndefined();
      expect(await readAll(got?.body ?? Readable.from([]))).toEqual(bytes);
    });

    it('keeps an explicit content type, defaults to octet-stream without a known extension, and overwrites', async () => {
      await store.put(`${p}data.bin`, Buffer.from('x'), { contentType: 'application/x-custom' });
      expect((await store.head(`${p}data.bin`))?.contentType).toBe('application/x-custom');
      const second = await store.put(`${p}data.bin`, Buffer.from('second'));
      expect(second.contentType).toBe('application/octet-stream');
      expect((await store.head(`${p}data.bin`))?.size).toBe(6);
      expect(await store.head(`${p}missing`)).toBeUndefined();
      expect(await store.get(`${p}missing`)).toBeUndefined();
    });

    it('streams a multi-MiB body in and out without holding it', async () => {
      const size = 12 * MiB + 12_345;
      const expected = await md5OfStream(generated(size));
      const info = await store.put(`${p}big.bin`, generated(size));
      expect(info.size).toBe(size);
      expect(info.etag).toMatch(/^".+"$/);
      const got = await store.get(`${p}big.bin`);
      expect(got?.info.etag).toBe(info.etag);
      expect(await md5OfStream(got?.body ?? Readable.from([]))).toEqual(expected);
    });

    it('serves inclusive byte ranges: closed, open-ended, clamped at the end; a start beyond is InvalidRange', async () => {
      const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
      await store.put(`${p}r.bin`, bytes);
      const read = async (start: number, end?: number) => {
        const got = await store.get(`${p}r.bin`, { range: end === undefined ? { start } : { start, end } });
        return {
          range: got?.range,
          size: got?.info.size,
          bytes: await readAll(got?.body ?? Readable.from([])),
        };
      };
      expect(await read(10, 19)).toEqual({
        range: { start: 10, end: 19 },
        size: 100,
        bytes: bytes.subarray(10, 20),
      });
      expect(await read(0, 0)).toEqual({
        range: { start: 0, end: 0 },
        size: 100,
        bytes: bytes.subarray(0, 1),
      });
      expect(await read(90)).toEqual({ range: { start: 90, end: 99 }, size: 100, bytes: bytes.subarray(90) });
      expect(await read(95, 500)).toEqual({
        range: { start: 95, end: 99 },
        size: 100,
        bytes: bytes.subarray(95),
      });
      await failure(store.get(`${p}r.bin`, { range: { start: 100 } }), 'InvalidRange');
      await failure(store.get(`${p}r.bin`, { range: { start: 20, end: 10 } }), 'InvalidRange');
      expect(await store.get(`${p}absent.bin`, { range: { start: 0 } })).toBeUndefined();
    });

    it('lists keys under a prefix in byte order, in pages of limit after startAfter', async () => {
      const keys = ['list/b', 'list/a/2', 'list/B', 'list/a/1', 'list/c.txt', 'lisx'];
      for (const k of keys) await store.put(`${p}${k}`, Buffer.from(k));
      const all = await store.list(`${p}list/`);
      expect(keysOf(all.items)).toEqual(
        ['list/B', 'list/a/1', 'list/a/2', 'list/b', 'list/c.txt'].map((k) => p + k),
      );
      expect(all.nextStartAfter).toBeUndefined();
      expect(all.items[4]).toMatchObject({
        size: 10,
        contentType: 'text/plain; charset=utf-8',
        etag: md5Etag(Buffer.from('list/c.txt')),
      });

      const first = await store.list(`${p}list/`, { limit: 2 });
      expect(keysOf(first.items)).toEqual([`${p}list/B`, `${p}list/a/1`]);
      expect(first.nextStartAfter).toBe(`${p}list/a/1`);
      const second = await store.list(`${p}list/`, { limit: 2, startAfter: first.nextStartAfter ?? '' });
      expect(keysOf(second.items)).toEqual([`${p}list/a/2`, `${p}list/b`]);
      const third = await store.list(`${p}list/`, { limit: 2, startAfter: second.nextStartAfter ?? '' });
      expect(keysOf(third.items)).toEqual([`${p}list/c.txt`]);
      expect(third.nextStartAfter).toBeUndefined();

      expect(keysOf((await store.list(`${p}lis`)).items)).toHaveLength(6);
      expect((await store.list(`${p}nothing/`)).items).toEqual([]);
    });

    it('deletes one object (true, then false) and every object under a prefix (their count)', async () => {
      await store.put(`${p}one`, Buffer.from('1'));
      expect(await store.delete(`${p}one`)).toBe(true);
      expect(await store.head(`${p}one`)).toBeUndefined();
      expect(await store.delete(`${p}one`)).toBe(false);

      for (const k of ['del/a', 'del/b/c', 'del/b/d', 'delx']) await store.put(`${p}${k}`, Buffer.from(k));
      expect(await store.deletePrefix(`${p}del/`)).toBe(3);
      expect(keysOf((await store.list(p)).items)).toEqual([`${p}delx`]);
      expect(await store.deletePrefix(`${p}del/`)).toBe(0);
    });

    it('rejects invalid keys with InvalidKey and writes nothing', async () => {
      const invalid = ['../x', '/abs', 'a\\b', 'a\u0000b', 'a//b', '', 'a/./b', 'a/', 'x'.repeat(1025)];
      for (const key of invalid) {
        await failure(store.put(key, Buffer.from('no')), 'InvalidKey');
        await failure(store.put(key, Readable.from([Buffer.from('no')])), 'InvalidKey');
        await failure(store.head(key), 'InvalidKey');
        await failure(store.get(key), 'InvalidKey');
        await failure(store.delete(key), 'InvalidKey');
        await failure(store.signedPutUrl(key, { expiresInSeconds: 60 }), 'InvalidKey');
      }
      let page = await store.list('');
      const stray: string[] = [];
      for (;;) {
        stray.push(...keysOf(page.items).filter((k) => !k.startsWith('run-')));
        if (page.nextStartAfter === undefined) break;
        page = await store.list('', { startAfter: page.nextStartAfter });
      }
      expect(stray).toEqual([]);
    });

    it('refuses a body beyond maxSize with TooLarge and leaves nothing behind (nor replaces what was there)', async () => {
      await failure(store.put(`${p}big/buffer`, Buffer.alloc(11), { maxSize: 10 }), 'TooLarge');
      await failure(store.put(`${p}big/stream`, generated(3 * MiB), { maxSize: MiB }), 'TooLarge');
      // Past the first multipart part on S3: the started upload must be aborted.
      await failure(store.put(`${p}big/multipart`, generated(8 * MiB), { maxSize: 6 * MiB }), 'TooLarge');
      expect((await store.list(`${p}big/`)).items).toEqual([]);

      const kept = await store.put(`${p}kept`, Buffer.from('original'));
      await failure(store.put(`${p}kept`, generated(2 * MiB), { maxSize: MiB }), 'TooLarge');
      expect(await store.head(`${p}kept`)).toEqual(kept);
      expect((await store.put(`${p}exact`, generated(MiB), { maxSize: MiB })).size).toBe(MiB);
    });

    it('stores what a client PUTs to a signed URL, and serves it at a signed GET URL, with no API key', async () => {
      const key = `${p}upload/report.txt`;
      const before = Date.now();
      const put = await store.signedPutUrl(key, { expiresInSeconds: 600, contentType: 'text/plain' });
      expect(Date.parse(put.expiresAt)).toBeGreaterThan(before + 590_000);
      const res = await fetch(put.url, {
        method: 'PUT',
        body: 'uploaded bytes',
        headers: { 'content-type': 'text/plain' },
      });
      expect(res.status).toBe(200);
      expect(await store.head(key)).toMatchObject({
        size: 14,
        contentType: 'text/plain',
        etag: md5Etag(Buffer.from('uploaded bytes')),
      });

      const get = await store.signedGetUrl(key, { expiresInSeconds: 600 });
      const got = await fetch(get.url);
      expect(got.status).toBe(200);
      expect(got.headers.get('etag')).toBe(md5Etag(Buffer.from('uploaded bytes')));
      expect(got.headers.get('content-length')).toBe('14');
      expect(await got.text()).toBe('uploaded bytes');

      const missing = await fetch(
        (await store.signedGetUrl(`${p}upload/none`, { expiresInSeconds: 600 })).url,
      );
      expect(missing.status).toBe(404);
    });

    const sizeTitle =
      options.declaredSizeNotEnforced === undefined
        ? 'refuses a body larger than the size a signed PUT URL was issued for, storing nothing'
        : `KNOWN GAP, does not check the size a signed PUT URL was issued for: ${options.declaredSizeNotEnforced}`;
    it(sizeTitle, async () => {
      const key = `${p}declared.bin`;
      const put = await store.signedPutUrl(key, { expiresInSeconds: 600, size: 4 });
      const larger = await fetch(put.url, { method: 'PUT', body: 'more than four bytes' });
      if (options.declaredSizeNotEnforced === undefined) {
        expect([403, 413]).toContain(larger.status);
        expect(await store.head(key)).toBeUndefined();
      } else {
        expect(larger.status).toBe(200);
      }
      const exact = await fetch(put.url, { method: 'PUT', body: 'four' });
      expect(exact.status).toBe(200);
      expect((await store.head(key))?.size).toBe(4);
    });

    const expiryTitle =
      options.expiryNotEnforced === undefined
        ? 'refuses expired signed URLs with 403'
        : `KNOWN GAP, does not refuse expired signed URLs: ${options.expiryNotEnforced}`;
    it(expiryTitle, async () => {
      const key = `${p}expiring.txt`;
      await store.put(key, Buffer.from('soon gone'));
      const get = await store.signedGetUrl(key, { expiresInSeconds: 1 });
      const put = await store.signedPutUrl(`${p}late.txt`, {
        expiresInSeconds: 1,
        contentType: 'text/plain',
      });
      await sleep(2500);
      const late = await fetch(put.url, {
        method: 'PUT',
        body: 'late',
        headers: { 'content-type': 'text/plain' },
      });
      const got = await fetch(get.url);
      if (options.expiryNotEnforced === undefined) {
        expect([got.status, late.status]).toEqual([403, 403]);
        expect(await store.head(`${p}late.txt`)).toBeUndefined();
      } else {
        expect([got.status, late.status]).toEqual([200, 200]);
      }
    });
  });
}
