// Embedded store write and read costs, as ratios against baselines measured in the same run:
// - writes against a bare atomic file write (temp file, fsync, rename, fsync dir) of the same bytes,
//   the floor any durable store pays;
// - API reads (GET /v1/agent-computers/:id through auth, validation and the informer cache) against
//   a bare Express handler answering the same JSON on the same machine.
// Run: npm run bench
import { mkdtemp, open, rename, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { SecretType } from '../crds/index.js';
import { EmbeddedStore } from '../platform/store/embedded.js';
import { call, startTestApi } from '../test/support/api-server.js';
import { closeServer, listenOnLoopback } from './support/http.js';

const WRITES = 300;
const READS = 2000;

async function atomicWrite(dir: string, name: string, data: string): Promise<void> {
  const temp = join(dir, `.${name}.tmp`);
  const file = await open(temp, 'w', 0o600);
  await file.writeFile(data);
  await file.sync();
  await file.close();
  await rename(temp, join(dir, name));
  const handle = await open(dir, 'r');
  await handle.sync();
  await handle.close();
}

async function timed(label: string, count: number, run: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await run(i);
  const perOp = Number(process.hrtime.bigint() - start) / 1e6 / count;
  console.log(`${label}: ${perOp.toFixed(3)} ms/op`);
  return perOp;
}

async function benchWrites(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-bench-'));
  const store = await EmbeddedStore.open(join(dir, 'store'));
  const payload = 'x'.repeat(2048);
  const secret = (i: number) => ({
    apiVersion: 'v1' as const,
    kind: 'Secret' as const,
    metadata: { name: `s-${i}`, namespace: 'bench' },
    data: { v: Buffer.from(payload).toString('base64') },
  });
  const bytes = JSON.stringify(secret(0));
  const baseline = await timed('baseline: atomic file write', WRITES, (i) =>
    atomicWrite(dir, `b-${i}.json`, bytes),
  );
  const measured = await timed('embedded store create', WRITES, (i) => store.create(SecretType, secret(i)));
  await store.close();
  await rm(dir, { recursive: true, force: true });
  return measured / baseline;
}

async function benchReads(): Promise<number> {
  const api = await startTestApi();
  const key = await api.key();
  const created = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'bench' } });
  const record: unknown = await created.json();
  const id = typeof record === 'object' && record !== null && 'id' in record ? String(record.id) : '';

  const bare = express();
  bare.get('/x', (_req, res) => {
    res.json(record);
  });
  const server = createServer(bare);
  const port = await listenOnLoopback(server);

  const baseline = await timed('baseline: bare express JSON handler', READS, () =>
    fetch(`http://127.0.0.1:${port}/x`).then((res) => res.arrayBuffer()),
  );
  const measured = await timed('GET /v1/agent-computers/:id', READS, () =>
    call(api, `/v1/agent-computers/${id}`, { key }).then((res) => res.arrayBuffer()),
  );
  await closeServer(server);
  await api.stop();
  return measured / baseline;
}

const writeRatio = await benchWrites();
const readRatio = await benchReads();
console.log(`\nembedded store create / bare atomic write: ${writeRatio.toFixed(2)}x`);
console.log(`API GET agent computer / bare express handler: ${readRatio.toFixed(2)}x`);
