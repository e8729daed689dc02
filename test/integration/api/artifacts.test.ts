// The workspace artifacts API (docs/api.md#files-and-artifacts) over the filesystem object store, whose signed URLs the
// API server itself serves; then the contract's own 32 MiB default, which the shared suite lowers.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FilesystemObjectStore } from '../../../platform/objectstore/filesystem.js';
import type { ObjectInfo, PutOptions } from '../../../platform/objectstore/types.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { artifactsContract } from '../../contracts/artifacts.contract.js';
import { BOUNDARY, MULTIPART, generatedChunks, multipart, send } from '../../contracts/artifacts-http.js';

artifactsContract('the filesystem object store', async (artifactLimits) => {
  const api = await startTestApi({ artifactLimits });
  return { api, cleanup: () => api.stop() };
});

describe('workspace artifacts with the default limits', () => {
  let api: TestApi;
  let key: string;
  beforeAll(async () => {
    api = await startTestApi();
    key = await api.key({ org: 'acme' });
  }, 30_000);
  afterAll(async () => {
    await api.stop();
  });

  it('refuses a multipart upload declaring more than 32 MiB (413) before storing any of it', async () => {
    const created = await call(api, '/v1/agent-computers', { method: 'POST', key, body: {} });
    const { id } = (await created.json()) as { id: string };
    const res = await send(api.url, `/v1/workspaces/${id}/artifacts`, {
      method: 'POST',
      headers: { API_KEY: key, 'content-type': MULTIPART },
      body: multipart([
        { filename: 'a.bin', data: Buffer.alloc(20 * 1024 * 1024) },
        { filename: 'b.bin', data: Buffer.alloc(14 * 1024 * 1024) },
      ]),
    });
    expect(res.status).toBe(413);
    const listed = await call(api, `/v1/workspaces/${id}/artifacts`, { key });
    expect(((await listed.json()) as { total: number }).total).toBe(0);
  });
});

/** The real filesystem store, remembering which keys it stored and deleted. */
class ObservedStore extends FilesystemObjectStore {
  readonly stored: string[] = [];
  readonly deleted: string[] = [];

  override async put(
    key: string,
    body: NodeJS.ReadableStream | Buffer,
    options?: PutOptions,
  ): Promise<ObjectInfo> {
    const info = await super.put(key, body, options);
    this.stored.push(key);
    return info;
  }

  override async delete(key: string): Promise<boolean> {
    const existed = await super.delete(key);
    if (existed) this.deleted.push(key);
    return existed;
  }
}

describe('all-or-nothing multipart uploads', () => {
  it('deletes a part that had already landed when a later part crosses the limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-artifacts-observed-'));
    const objectStore = new ObservedStore({
      root: dir,
      baseUrl: 'http://127.0.0.1:1',
      signingSecret: randomBytes(32),
    });
    const api = await startTestApi({ objectStore, artifactLimits: { uploadRequestBytes: 1024 * 1024 } });
    try {
      const key = await api.key({ org: 'acme' });
      const created = await call(api, '/v1/agent-computers', { method: 'POST', key, body: {} });
      const { id } = (await created.json()) as { id: string };
      const head = (filename: string): string =>
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\n\r\n`;
      // The first part, then a pause long enough for it to be stored, then a part past the limit.
      const body = Readable.from(
        (async function* () {
          yield Buffer.from(`${head('first.txt')}landed first\r\n`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
          yield Buffer.from(head('second.bin'));
          yield* generatedChunks(2 * 1024 * 1024);
          yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
        })(),
      );
      const res = await send(api.url, `/v1/workspaces/${id}/artifacts`, {
        method: 'POST',
        headers: { API_KEY: key, 'content-type': MULTIPART },
        body,
      });
      expect(res.status).toBe(413);
      const first = objectStore.stored.find((stored) => stored.endsWith('/artifacts/first.txt'));
      expect(first).toBeDefined();
      expect(objectStore.deleted).toEqual([first]);
      const listed = await call(api, `/v1/workspaces/${id}/artifacts`, { key });
      expect(((await listed.json()) as { total: number }).total).toBe(0);
    } finally {
      await api.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
