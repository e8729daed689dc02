// The object store conformance suite against the embedded FilesystemObjectStore, its signed URLs
// served by signed-url-handler on a real HTTP server; then what only a directory can show.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FilesystemObjectStore } from '../../platform/objectstore/filesystem.js';
import { signedUrlHandler } from '../../platform/objectstore/signed-url-handler.js';
import { objectStoreContract } from '../contracts/object-store.contract.js';

interface Served {
  store: FilesystemObjectStore;
  root: string;
  baseUrl: string;
  close(): Promise<void>;
}

async function serve(maxSize?: number): Promise<Served> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-objects-'));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const store = new FilesystemObjectStore({ root, baseUrl, signingSecret: randomBytes(32) });
  const handler = signedUrlHandler({ store, ...(maxSize === undefined ? {} : { maxSize }) });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handler(req, res);
  });
  return {
    store,
    root,
    baseUrl,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      await rm(root, { recursive: true, force: true });
    },
  };
}

objectStoreContract('FilesystemObjectStore', async () => {
  const served = await serve();
  return { store: served.store, cleanup: () => served.close() };
});

describe('FilesystemObjectStore on its own', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(1024);
  });
  afterAll(async () => {
    await served.close();
  });

  it('leaves no partial object (nor temp file) when the body fails midway', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(64 * 1024, 1));
    const putting = served.store.put('crash/half.bin', body);
    setTimeout(() => body.destroy(new Error('client went away')), 50);
    await expect(putting).rejects.toThrow(/writing object crash\/half.bin/);
    expect(await served.store.head('crash/half.bin')).toBeUndefined();
    expect((await served.store.list('crash/')).items).toEqual([]);
    expect(await readdir(join(served.root, 'tmp'))).toEqual([]);
  });

  it('answers 403 to a tampered signature, another key, or another method than the one signed', async () => {
    await served.store.put('signed/a.txt', Buffer.from('a'));
    const { url } = await served.store.signedGetUrl('signed/a.txt', { expiresInSeconds: 60 });
    expect((await fetch(url)).status).toBe(200);

    const tampered = new URL(url);
    const signature = tampered.searchParams.get('signature') ?? '';
    tampered.searchParams.set('signature', `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`);
    expect((await fetch(tampered)).status).toBe(403);

    const otherKey = new URL(url);
    otherKey.pathname = '/v1/storage/signed%2Fb.txt';
    expect((await fetch(otherKey)).status).toBe(403);

    const later = new URL(url);
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600));
    expect((await fetch(later)).status).toBe(403);

    expect((await fetch(url, { method: 'PUT', body: 'overwrite' })).status).toBe(403);
    const asPut = new URL(url);
    asPut.searchParams.set('method', 'PUT');
    expect((await fetch(asPut, { method: 'PUT', body: 'overwrite' })).status).toBe(403);
    expect((await served.store.head('signed/a.txt'))?.size).toBe(1);
  });

  it('answers HEAD on a signed GET URL with the headers alone', async () => {
    await served.store.put('signed/h.json', Buffer.from('{}'));
    const { url } = await served.store.signedGetUrl('signed/h.json', { expiresInSeconds: 60 });
    const res = await fetch(url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('content-length')).toBe('2');
  });

  it('answers 413 to a signed PUT beyond the handler maxSize, declared or streamed, and stores nothing', async () => {
    const { url } = await served.store.signedPutUrl('signed/big.bin', { expiresInSeconds: 60 });
    expect((await fetch(url, { method: 'PUT', body: Buffer.alloc(2048) })).status).toBe(413);
    const streamed = await fetch(url, {
      method: 'PUT',
      body: Readable.toWeb(Readable.from([Buffer.alloc(600), Buffer.alloc(600)])),
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    expect(await served.store.head('signed/big.bin')).toBeUndefined();
  });

  it('answers 404 outside /v1/storage/', async () => {
    expect((await fetch(`${served.baseUrl}/elsewhere`)).status).toBe(404);
  });
});
