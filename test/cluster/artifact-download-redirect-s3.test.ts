// Artifact downloads redirected to presigned URLs of S3 on the cluster harness's moto
// (AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT): the API answers 307 to moto for the bytes and answers itself
// whatever needs none (404, 304, 416, HEAD). Requests go out without following redirects, so each
// test sees exactly what the API said. Other tests share moto: this file uses a bucket of its own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { MULTIPART, multipart, send } from '../contracts/artifacts-http.js';
import { useMotoBucket } from './moto-bucket.js';
import { testCluster } from './support.js';

const { bucket, connection } = useMotoBucket('artifact-redirect');

describe('artifact downloads redirected to S3 presigned URLs', () => {
  let objectStore: S3ObjectStore;
  let api: TestApi;
  let key: string;
  let base: string;
  const bytes = Buffer.from('<html><body>report</body></html>');

  beforeAll(async () => {
    objectStore = new S3ObjectStore({ bucket, ...connection() });
    api = await startTestApi({ objectStore, artifactDownloadRedirect: objectStore });
    key = await api.key({ org: 'acme' });
    const created = await call(api, '/v1/agent-computers', {
      method: 'POST',
      key,
      body: { name: 'redirect' },
    });
    base = `/v1/workspaces/${((await created.json()) as { id: string }).id}/artifacts`;
    const uploaded = await send(api.url, base, {
      method: 'POST',
      headers: { API_KEY: key, 'content-type': MULTIPART },
      body: multipart([{ filename: 'reports/q3 summary.html', data: bytes }]),
    });
    expect(uploaded.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await api.stop();
    objectStore.close();
  });

  const download = (headers: Record<string, string> = {}, method = 'GET') =>
    send(api.url, `${base}/reports%2Fq3%20summary.html`, { method, headers: { API_KEY: key, ...headers } });

  it('answers a GET with 307 to a presigned moto URL that is never cached, and no bytes', async () => {
    const res = await download();
    expect(res.status).toBe(307);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.length).toBe(0);
    const location = new URL(res.headers.location ?? '');
    expect(location.origin).toBe(new URL(testCluster().motoUrl).origin);
    expect(location.searchParams.get('X-Amz-Expires')).toBe('300');
  });

  it("serves the bytes at the Location without an API key, with the API's Content-Disposition", async () => {
    const location = (await download()).headers.location ?? '';
    const got = await fetch(location);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
    expect(got.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="q3 summary.html"; filename*=UTF-8''q3%20summary.html`,
    );
    expect(got.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('carries a Range through the redirect: the Location answers 206 with those bytes', async () => {
    const res = await download({ range: 'bytes=6-11' });
    expect(res.status).toBe(307);
    const got = await fetch(res.headers.location ?? '', { headers: { range: 'bytes=6-11' } });
    expect(got.status).toBe(206);
    expect(await got.text()).toBe('<body>');
  });

  it('answers 304 itself when If-None-Match names the current ETag', async () => {
    const { etag } = (await download({}, 'HEAD')).headers;
    const res = await download({ 'if-none-match': etag ?? '' });
    expect(res.status).toBe(304);
    expect(res.headers.location).toBeUndefined();
  });

  it('answers HEAD itself with the size and type', async () => {
    const res = await download({}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('answers an unsatisfiable range with 416 itself', async () => {
    const res = await download({ range: `bytes=${bytes.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${bytes.length}`);
  });

  it('answers 404 in the JSON error shape for a missing artifact, without a redirect', async () => {
    const res = await send(api.url, `${base}/missing.txt`, { headers: { API_KEY: key } });
    expect(res.status).toBe(404);
    expect(res.headers.location).toBeUndefined();
    expect(JSON.parse(res.body.toString())).toMatchObject({ error: { code: 'not_found' } });
  });
});
