/**
 * The workspace artifacts API (docs/api.md#files-and-artifacts) against one object store backend: a real API server
 * (startTestApi) whose ObjectStore is the backend under test, exercised over HTTP only. It runs against
 * the filesystem store (test/integration/api/artifacts.test.ts) and S3 on moto
 * (test/cluster/artifacts-s3.test.ts). Each test makes a workspace of its own, so tests never see
 * each other's artifacts in a shared bucket.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import type { ArtifactLimits } from '../../api/agent-computer/artifacts/routes.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { MULTIPART, multipart, send, streamedMultipart } from './artifacts-http.js';
import type { Part, RawResponse } from './artifacts-http.js';

export interface ArtifactsFixture {
  api: TestApi;
  cleanup(): Promise<void>;
}

export interface ArtifactsContractOptions {
  /** The backend does not refuse expired signed URLs (moto): the expiry test names the gap and pins it. */
  expiryNotEnforced?: string;
}

/** Starts an API server over the backend under test, with these artifact limits. */
export type ArtifactsSetup = (
  limits: Partial<ArtifactLimits>,
  objectStore?: ObjectStore,
) => Promise<ArtifactsFixture>;

interface Artifact {
  filename: string;
  size: number;
  contentType: string;
  etag: string;
  updatedAt: string;
}
interface UploadUrl {
  filename: string;
  uploadUrl: string;
  expiresAt: string;
  contentType: string;
}

const KiB = 1024;
const REQUEST_LIMIT = 256 * KiB;
const md5 = (bytes: Buffer): string => `"${createHash('md5').update(bytes).digest('hex')}"`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const errorCode = (res: RawResponse): unknown =>
  (JSON.parse(res.body.toString()) as { error?: { code?: unknown } }).error?.code;

export function artifactsContract(
  name: string,
  setup: ArtifactsSetup,
  options: ArtifactsContractOptions = {},
): void {
  describe(`workspace artifacts API on ${name}`, () => {
    let fixture: ArtifactsFixture;
    let api: TestApi;
    let key: string;

    beforeAll(async () => {
      fixture = await setup({ uploadRequestBytes: REQUEST_LIMIT });
      api = fixture.api;
      key = await api.key({ org: 'acme' });
    }, 60_000);
    afterAll(async () => {
      await fixture.cleanup();
    });

    const workspace = async (callerKey = key): Promise<string> => {
      const res = await call(api, '/v1/agent-computers', {
        method: 'POST',
        key: callerKey,
        body: { name: 'artifacts' },
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const base = (id: string): string => `/v1/workspaces/${id}/artifacts`;
    const upload = (id: string, parts: Part[], callerKey = key): Promise<RawResponse> =>
      send(api.url, base(id), {
        method: 'POST',
        headers: { API_KEY: callerKey, 'content-type': MULTIPART },
        body: multipart(parts),
      });
    const list = async (id: string, query = ''): Promise<{ data: Artifact[]; total: number }> => {
      const res = await call(api, `${base(id)}${query}`, { key });
      expect(res.status).toBe(200);
      return (await res.json()) as { data: Artifact[]; total: number };
    };
    const names = async (id: string): Promise<string[]> =>
      (await list(id, '?limit=100')).data.map((a) => a.filename).sort();
    const uploadUrls = (id: string, files: unknown[], callerKey = key): Promise<Response> =>
      call(api, `${base(id)}/upload-url`, { method: 'POST', key: callerKey, body: { files } });

    it('takes a file PUT to a signed upload URL without an API key, then lists and serves it', async () => {
      const id = await workspace();
      const res = await uploadUrls(id, [{ filename: 'reports/q1.csv', size: 11 }]);
      expect(res.status).toBe(201);
      const [signed] = ((await res.json()) as { data: UploadUrl[] }).data;
      if (signed === undefined) throw new Error('no upload URL');
      expect(signed).toMatchObject({ filename: 'reports/q1.csv', contentType: 'text/csv; charset=utf-8' });
      const ttl = Date.parse(signed.expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      const put = await fetch(signed.uploadUrl, {
        method: 'PUT',
        headers: { 'content-type': signed.contentType },
        body: 'a,b\n1,2\n3,4',
      });
      expect(put.status).toBe(200);
      expect((await list(id)).data).toEqual([
        {
          filename: 'reports/q1.csv',
          size: 11,
          contentType: 'text/csv; charset=utf-8',
          etag: md5(Buffer.from('a,b\n1,2\n3,4')),
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ]);
      const got = await call(api, `${base(id)}/reports%2Fq1.csv`, { key });
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(got.headers.get('content-disposition')).toBe(
        `attachment; filename="q1.csv"; filename*=UTF-8''q1.csv`,
      );
      expect(await got.text()).toBe('a,b\n1,2\n3,4');
      const plainSlash = await call(api, `${base(id)}/reports/q1.csv`, { key });
      expect(plainSlash.status).toBe(200);
      expect(await plainSlash.text()).toBe('a,b\n1,2\n3,4');
    });

    const expiryTitle =
      options.expiryNotEnforced === undefined
        ? 'refuses a PUT to an expired upload URL (403) and stores nothing'
        : `KNOWN GAP, an expired upload URL still takes a PUT: ${options.expiryNotEnforced}`;
    it(
      expiryTitle,
      async () => {
        const shortLived = await setup({ uploadUrlTtlSeconds: 1 });
        try {
          const shortKey = await shortLived.api.key({ org: 'acme' });
          const res = await call(shortLived.api, '/v1/agent-computers', {
            method: 'POST',
            key: shortKey,
            body: {},
          });
          const { id } = (await res.json()) as { id: string };
          const urls = await call(shortLived.api, `${base(id)}/upload-url`, {
            method: 'POST',
            key: shortKey,
            body: { files: [{ filename: 'late.txt' }] },
          });
          const [signed] = ((await urls.json()) as { data: UploadUrl[] }).data;
          if (signed === undefined) throw new Error('no upload URL');
          await sleep(2500);
          const put = await fetch(signed.uploadUrl, {
            method: 'PUT',
            headers: { 'content-type': signed.contentType },
            body: 'too late',
          });
          const listed = await call(shortLived.api, base(id), { key: shortKey });
          const { total } = (await listed.json()) as { total: number };
          if (options.expiryNotEnforced === undefined) {
            expect([put.status, total]).toEqual([403, 0]);
          } else {
            expect([put.status, total]).toEqual([200, 1]);
          }
        } finally {
          await shortLived.cleanup();
        }
      },
      30_000,
    );

    it('stores every file of a multipart upload, nested paths included, with content types from the part or the name', async () => {
      const id = await workspace();
      const res = await upload(id, [
        { filename: 'summary.md', data: '# Done' },
        { filename: 'out/data/result.json', contentType: 'application/json', data: '{"ok":true}' },
        { filename: 'blob', contentType: 'image/png', data: Buffer.from([0x89, 0x50]) },
        { filename: 'r\u00e9sum\u00e9.txt', encoded: true, data: 'caf\u00e9' },
      ]);
      expect(res.status).toBe(201);
      const { data } = JSON.parse(res.body.toString()) as { data: Artifact[] };
      expect(data.map((a) => [a.filename, a.size, a.contentType])).toEqual([
        ['summary.md', 6, 'text/markdown; charset=utf-8'],
        ['out/data/result.json', 11, 'application/json'],
        ['blob', 2, 'image/png'],
        ['r\u00e9sum\u00e9.txt', 5, 'text/plain; charset=utf-8'],
      ]);
      expect(await names(id)).toEqual(['blob', 'out/data/result.json', 'r\u00e9sum\u00e9.txt', 'summary.md']);
      const nested = await call(api, `${base(id)}/out/data/result.json`, { key });
      expect(await nested.json()).toEqual({ ok: true });
      const accented = await call(api, `${base(id)}/${encodeURIComponent('r\u00e9sum\u00e9.txt')}`, { key });
      expect(accented.headers.get('content-disposition')).toBe(
        `attachment; filename="r_sum_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`,
      );
    });

    it('serves byte ranges (206), refuses ranges past the end (416), and answers 304 to a matching If-None-Match', async () => {
      const id = await workspace();
      const bytes = randomBytes(1000);
      await upload(id, [{ filename: 'data.bin', data: bytes }]);
      const path = `${base(id)}/data.bin`;
      const ranged = async (range: string): Promise<Response> => call(api, path, { key, headers: { range } });

      const closed = await ranged('bytes=10-19');
      expect(closed.status).toBe(206);
      expect(closed.headers.get('content-range')).toBe('bytes 10-19/1000');
      expect(closed.headers.get('content-length')).toBe('10');
      expect(Buffer.from(await closed.arrayBuffer())).toEqual(bytes.subarray(10, 20));
      const open = await ranged('bytes=990-');
      expect(Buffer.from(await open.arrayBuffer())).toEqual(bytes.subarray(990));
      const suffix = await ranged('bytes=-5');
      expect(suffix.headers.get('content-range')).toBe('bytes 995-999/1000');
      expect(Buffer.from(await suffix.arrayBuffer())).toEqual(bytes.subarray(995));
      const clamped = await ranged('bytes=998-5000');
      expect(clamped.headers.get('content-range')).toBe('bytes 998-999/1000');
      const beyond = await ranged('bytes=1000-');
      expect(beyond.status).toBe(416);
      expect(beyond.headers.get('content-range')).toBe('bytes */1000');

      const whole = await call(api, path, { key });
      expect(whole.status).toBe(200);
      const etag = whole.headers.get('etag') ?? '';
      expect(etag).toBe(md5(bytes));
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect(whole.headers.get('last-modified')).toMatch(/GMT$/);
      expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes);
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await call(api, path, { key, headers: { 'if-none-match': ifNoneMatch } });
        expect([ifNoneMatch, cached.status]).toEqual([ifNoneMatch, 304]);
        expect(cached.headers.get('etag')).toBe(etag);
      }
      const head = await call(api, path, { key, method: 'HEAD' });
      expect([head.status, head.headers.get('content-length'), head.headers.get('etag')]).toEqual([
        200,
        '1000',
        etag,
      ]);
      const stale = await call(api, path, { key, headers: { 'if-none-match': '"other"' } });
      expect(stale.status).toBe(200);
      expect((await call(api, `${base(id)}/missing.bin`, { key })).status).toBe(404);
    });

    it('lists newest first in pages of limit after offset, with the total', async () => {
      const id = await workspace();
      const order = ['first.txt', 'second.txt', 'third.txt', 'fourth.txt'];
      for (const filename of order) {
        expect((await upload(id, [{ filename, data: filename }])).status).toBe(201);
        // S3 keeps update times to the second: a second apart, the order is the upload order reversed.
        if (filename !== order.at(-1)) await sleep(1100);
      }
      const pages = await Promise.all([0, 2].map((offset) => list(id, `?limit=2&offset=${offset}`)));
      expect(pages.map((page) => page.total)).toEqual([4, 4]);
      expect(pages.flatMap((page) => page.data.map((a) => a.filename))).toEqual([...order].reverse());
      const last = await list(id, '?limit=2&offset=3');
      expect(last.data.map((a) => a.filename)).toEqual(['first.txt']);
      expect((await call(api, `${base(id)}?limit=101`, { key })).status).toBe(400);
    }, 30_000);

    it('deletes one artifact (204, then 404) and all of them with their count', async () => {
      const id = await workspace();
      await upload(id, [
        { filename: 'a.txt', data: 'a' },
        { filename: 'b/c.txt', data: 'c' },
        { filename: 'b/d.txt', data: 'd' },
      ]);
      expect((await call(api, `${base(id)}/a.txt`, { key, method: 'DELETE' })).status).toBe(204);
      expect((await call(api, `${base(id)}/a.txt`, { key, method: 'DELETE' })).status).toBe(404);
      expect(await names(id)).toEqual(['b/c.txt', 'b/d.txt']);
      const all = await call(api, base(id), { key, method: 'DELETE' });
      expect(all.status).toBe(200);
      expect(await all.json()).toEqual({ deleted: 2 });
      expect(await names(id)).toEqual([]);
    });

    it('refuses traversal and malformed names with 400 and writes nothing', async () => {
      const id = await workspace();
      await upload(id, [{ filename: 'kept.txt', data: 'kept' }]);
      const bad = ['../x', '/etc/passwd', 'a\\b', 'a\u0000b', 'a//b', './x', 'x/..', 'tab\there'];
      for (const filename of bad) {
        const viaUrl = await uploadUrls(id, [{ filename }]);
        expect([filename, viaUrl.status]).toEqual([filename, 400]);
        const viaPost = await upload(id, [
          { filename: 'ok-before.txt', data: 'x' },
          { filename, encoded: true, data: 'x' },
        ]);
        expect([filename, viaPost.status]).toEqual([filename, 400]);
      }
      for (const path of ['..%2Fx', '%2e%2e%2Fx', '%2e%2e/x', '%2Fetc%2Fpasswd', 'a%5Cb', 'a%00b', 'a%ZZ']) {
        for (const method of ['GET', 'DELETE']) {
          const res = await send(api.url, `${base(id)}/${path}`, { method, headers: { API_KEY: key } });
          expect([method, path, res.status]).toEqual([method, path, 400]);
        }
      }
      expect(await names(id)).toEqual(['kept.txt']);
    });

    it('answers 413 past the per-request limit and keeps none of that request, even parts that had landed', async () => {
      const id = await workspace();
      await upload(id, [{ filename: 'kept.txt', data: 'kept' }]);
      const declared = await upload(id, [
        { filename: 'small.txt', data: 'small' },
        { filename: 'big.bin', data: Buffer.alloc(REQUEST_LIMIT + 2 * 1024 * 1024) },
      ]);
      expect(declared.status).toBe(413);
      expect(errorCode(declared)).toBe('payload_too_large');
      // Chunked, so the server cannot refuse up front: the first part is stored before the second overflows.
      const streamed = await send(api.url, base(id), {
        method: 'POST',
        headers: { API_KEY: key, 'content-type': MULTIPART },
        body: streamedMultipart([
          { filename: 'landed-first.bin', size: 64 * KiB },
          { filename: 'overflow.bin', size: REQUEST_LIMIT },
        ]),
      });
      expect([streamed.status, streamed.body.toString()]).toEqual([413, expect.any(String)]);
      expect(await names(id)).toEqual(['kept.txt']);
      const exact = await send(api.url, base(id), {
        method: 'POST',
        headers: { API_KEY: key, 'content-type': MULTIPART },
        body: streamedMultipart([{ filename: 'exactly-at-limit.bin', size: REQUEST_LIMIT }]),
      });
      expect(exact.status).toBe(201);
    });

    it('refuses a non-multipart body (415), another field, no file, a bad and an oversized upload-url (400, 413)', async () => {
      const id = await workspace();
      const asJson = await call(api, base(id), { key, method: 'POST', body: { files: [] } });
      expect(asJson.status).toBe(415);
      const otherField = await upload(id, [
        { filename: 'a.txt', data: 'a' },
        { field: 'file', filename: 'b.txt', data: 'b' },
      ]);
      expect(otherField.status).toBe(400);
      const textField = await upload(id, [{ field: 'note', data: 'hello' }]);
      expect(textField.status).toBe(400);
      expect((await upload(id, [])).status).toBe(400);
      expect((await uploadUrls(id, [{ filename: 'huge.bin', size: 512 * 1024 * 1024 + 1 }])).status).toBe(
        413,
      );
      expect((await uploadUrls(id, [])).status).toBe(400);
      expect((await uploadUrls(id, [{ filename: 7 }])).status).toBe(400);
      expect(await names(id)).toEqual([]);
    });

    it("answers 404 for another organization's workspace and an unknown one, and 403 without the scope", async () => {
      const id = await workspace();
      await upload(id, [{ filename: 'secret.txt', data: 'acme only' }]);
      const other = await api.key({ org: 'globex' });
      const probes: [string, string][] = [
        ['GET', base(id)],
        ['GET', `${base(id)}/secret.txt`],
        ['DELETE', `${base(id)}/secret.txt`],
        ['DELETE', base(id)],
      ];
      for (const [method, path] of probes) {
        expect([method, path, (await call(api, path, { key: other, method })).status]).toEqual([
          method,
          path,
          404,
        ]);
      }
      expect((await upload(id, [{ filename: 'x.txt', data: 'x' }], other)).status).toBe(404);
      expect((await uploadUrls(id, [{ filename: 'x.txt' }], other)).status).toBe(404);
      expect((await call(api, base('5a3c43c0-62d4-4a5e-9b47-0d4c1cbb4c6b'), { key })).status).toBe(404);
      expect((await call(api, base('not-a-uuid'), { key })).status).toBe(404);
      const deleted = await workspace();
      expect((await call(api, `/v1/agent-computers/${deleted}`, { key, method: 'DELETE' })).status).toBe(204);
      expect((await call(api, base(deleted), { key })).status).toBe(404);

      const readOnly = await api.key({ org: 'acme', scopes: ['artifacts:read'] });
      expect((await upload(id, [{ filename: 'x.txt', data: 'x' }], readOnly)).status).toBe(403);
      expect((await call(api, `${base(id)}/secret.txt`, { key: readOnly, method: 'DELETE' })).status).toBe(
        403,
      );
      expect((await call(api, base(id), { key: readOnly })).status).toBe(200);
      const noArtifacts = await api.key({ org: 'acme', scopes: ['tasks:read'] });
      expect((await call(api, base(id), { key: noArtifacts })).status).toBe(403);
      expect(await names(id)).toEqual(['secret.txt']);
    });
  });
}
