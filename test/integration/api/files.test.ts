// POST /v1/files and the signed upload URL it answers (docs/api.md#files-and-artifacts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key({ org: 'acme' });
}, 30_000);

afterAll(async () => {
  await api.stop();
});

interface CreatedFile {
  id: string;
  filename: string;
  uploadUrl: string;
  expiresAt: string;
}

async function createFile(body: unknown, callerKey = key): Promise<Response> {
  return call(api, '/v1/files', { key: callerKey, method: 'POST', body });
}

describe('POST /v1/files', () => {
  it('answers 201 with an id and an upload URL valid for an hour', async () => {
    const res = await createFile({ filename: 'data.csv', contentType: 'text/csv', size: 12 });
    expect(res.status).toBe(201);
    const file = (await res.json()) as CreatedFile;
    expect(file).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      filename: 'data.csv',
      uploadUrl: expect.stringContaining(`${api.url}/v1/storage/`),
      expiresAt: expect.any(String),
    });
    const ttl = Date.parse(file.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('stores the bytes PUT to the upload URL without an API key, under the caller organization', async () => {
    const file = (await (await createFile({ filename: 'notes.txt' })).json()) as CreatedFile;
    const put = await fetch(file.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'hello files',
    });
    expect(put.status).toBe(200);
    const objectKey = `orgs/agentry-org-acme/files/${file.id}`;
    expect(decodeURIComponent(new URL(file.uploadUrl).pathname)).toBe(`/v1/storage/${objectKey}`);
    const stored = await api.objectStore.get(objectKey);
    expect(stored?.info).toMatchObject({ size: 11, contentType: 'text/plain' });
    const { url } = await api.objectStore.signedGetUrl(objectKey, { expiresInSeconds: 60 });
    expect(await (await fetch(url)).text()).toBe('hello files');
  });

  it('keys files of another organization under its own namespace', async () => {
    const other = await api.key({ org: 'globex', user: 'bob' });
    const file = (await (await createFile({ filename: 'a.txt' }, other)).json()) as CreatedFile;
    expect(decodeURIComponent(new URL(file.uploadUrl).pathname)).toBe(
      `/v1/storage/orgs/agentry-org-globex/files/${file.id}`,
    );
  });

  it('refuses an upload URL whose signature was tampered with', async () => {
    const file = (await (await createFile({ filename: 'x.txt' })).json()) as CreatedFile;
    const url = new URL(file.uploadUrl);
    url.pathname = url.pathname.replace(file.id, '00000000-0000-4000-8000-000000000000');
    expect((await fetch(url, { method: 'PUT', body: 'nope' })).status).toBe(403);
  });

  it.each([
    ['a traversal', { filename: '../etc/passwd' }],
    ['a path', { filename: 'dir/file.txt' }],
    ['a backslash', { filename: 'a\\b' }],
    ['a control character', { filename: 'a\nb' }],
    ['an empty name', { filename: '' }],
    ['a name over 255 characters', { filename: 'a'.repeat(256) }],
    ['a size over 512 MiB', { filename: 'big.bin', size: 512 * 1024 * 1024 + 1 }],
  ])('answers 400 for %s', async (_what, body) => {
    expect((await createFile(body)).status).toBe(400);
  });

  it('requires the files:write scope', async () => {
    const readOnly = await api.key({ org: 'acme', user: 'carol', scopes: ['tasks:read'] });
    expect((await createFile({ filename: 'a.txt' }, readOnly)).status).toBe(403);
  });
});
