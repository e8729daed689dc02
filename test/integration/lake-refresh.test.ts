import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LakeConfigSchema } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeConfigRequest, LakeStatus } from '../../platform/lake-protocol.js';
import { createLogger } from '../../platform/log.js';

/**
 * Loads over the S3 protocol from a small S3-compatible server on loopback that answers
 * GetObject from memory and can hold its answers: that makes "during a load" a state the test
 * controls instead of a race. (Listing and moto are covered by the cluster test.)
 */
class HoldingS3 {
  readonly objects = new Map<string, string>();
  /** Authorization header of each GetObject, by key. */
  readonly authorization = new Map<string, string | undefined>();
  private readonly held = new Set<string>();
  private waiting: (() => void)[] = [];
  private arrivals: { key: string; done: () => void }[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.answer(req, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  }

  /** Holds the answers for `key` until release(). */
  hold(key: string): void {
    this.held.add(key);
  }

  release(): void {
    this.held.clear();
    for (const go of this.waiting.splice(0)) go();
  }

  /** Resolves when a GetObject for `key` arrives. */
  arrival(key: string): Promise<void> {
    return new Promise((done) => this.arrivals.push({ key, done }));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = decodeURIComponent(
      new URL(req.url ?? '/', 'http://x').pathname.split('/').slice(2).join('/'),
    );
    this.authorization.set(key, req.headers.authorization);
    for (const arrival of this.arrivals.filter((a) => a.key === key)) arrival.done();
    this.arrivals = this.arrivals.filter((a) => a.key !== key);
    if (this.held.has(key) || key === 'hang.csv') await new Promise<void>((go) => this.waiting.push(go));
    if (res.destroyed) return; // the lake abandoned this download
    const body = this.objects.get(key);
    if (key === 'denied.csv') {
      this.error(res, 403, 'AccessDenied', 'Access Denied');
      return;
    }
    if (body === undefined) {
      this.error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private error(res: ServerResponse, status: number, code: string, message: string): void {
    const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
    res.end(xml);
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const TOKEN = randomBytes(24).toString('base64url');
const s3 = new HoldingS3();
let dir: string;
let lake: RunningLake;
let client: LakeClient;

const csv = (...ids: number[]) => `id,label\n${ids.map((id) => `${id},row ${id}`).join('\n')}\n`;

function dataset(
  name: string,
  key: string,
  auth: 'key' | 'public' = 'key',
  extra: Record<string, string> = {},
) {
  return {
    name,
    from: `s3://lake-bucket/${key}`,
    params: {
      ...extra,
      s3_auth: auth,
      ...(auth === 'key' ? { s3_key: 'AKIADUMMY', s3_secret: 'dummy-secret-value' } : {}),
      s3_endpoint: s3.url,
      allow_http: 'true',
      s3_region: 'us-east-1',
    },
  };
}

const configWith = (generation: number, ordersKey: string): LakeConfigRequest => ({
  generation,
  config: {
    name: 'refresh',
    datasets: [
      dataset('orders', ordersKey),
      dataset('gone', 'gone.csv'),
      dataset('denied', 'denied.csv'),
      dataset('open_data', 'open.csv', 'public'),
      dataset('hanging', 'hang.csv', 'key', { client_timeout: '300ms' }),
    ],
  },
});

async function waitFor(done: (status: LakeStatus) => boolean): Promise<LakeStatus> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await client.status();
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`status not reached: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const ids = async (): Promise<unknown[]> =>
  (await client.sql({ query: 'SELECT id FROM orders ORDER BY id' })).rows.map((row) => row.id);

beforeAll(async () => {
  await s3.start();
  s3.objects.set('orders.csv', csv(1, 2));
  s3.objects.set('open.csv', csv(7));
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-refresh-'));
  lake = await startLakeServer(
    LakeConfigSchema.parse({
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_DATA_DIR: dir,
      AGENTRY_LAKE_THREADS: '1',
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
      // S3 is moto on a loopback or private address.
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
  await client.applyConfig(configWith(1, 'orders.csv'));
  await waitFor((status) => !status.loading && status.generation === 1);
}, 60_000);

afterAll(async () => {
  await lake.stop();
  await s3.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lake server over S3: errors', () => {
  it('records NoSuchKey as an error naming the dataset and the object, and loads the others', async () => {
    const { datasets } = await client.status();
    expect(datasets.gone).toMatchObject({
      status: 'error',
      error: 'dataset gone: s3://lake-bucket/gone.csv: the object does not exist (NoSuchKey)',
    });
    expect(datasets.denied?.error).toMatch(/^dataset denied: s3:\/\/lake-bucket\/denied\.csv: access denied/);
    expect(datasets.orders).toMatchObject({ status: 'ready', rowCount: 2 });
    expect(await ids()).toEqual([1, 2]);
  });

  it('gives up on a server that does not answer within client_timeout', async () => {
    const { datasets } = await client.status();
    expect(datasets.hanging?.status).toBe('error');
    expect(datasets.hanging?.error).toBe(
      'dataset hanging: s3://lake-bucket/hang.csv: the server did not answer within client_timeout (TimeoutError)',
    );
  });

  it('never puts the credentials in the status', async () => {
    expect(JSON.stringify(await client.status())).not.toContain('dummy-secret-value');
  });

  it('signs with the given key, and sends public requests unsigned', () => {
    expect(s3.authorization.get('orders.csv')).toMatch(/Credential=AKIADUMMY\//);
    expect(s3.authorization.get('open.csv')).toBeUndefined();
  });
});

describe('lake server over S3: refresh', () => {
  it('serves the old rows while a refresh loads and the new rows after it', async () => {
    s3.objects.set('orders.csv', csv(1, 2, 3));
    s3.hold('orders.csv');
    const arrived = s3.arrival('orders.csv');
    await client.refresh(['orders', 'not_a_dataset']);
    await arrived;
    const during = await client.status();
    expect(during.loading).toBe(true);
    expect(during.datasets.orders).toMatchObject({ status: 'refreshing', rowCount: 2 });
    expect(await ids()).toEqual([1, 2]);
    s3.release();
    const after = await waitFor((status) => status.datasets.orders?.status === 'ready' && !status.loading);
    expect(after.datasets.orders?.rowCount).toBe(3);
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it('keeps serving the old rows when a refresh fails, with the error in the status', async () => {
    s3.objects.delete('orders.csv');
    await client.refresh(['orders']);
    const status = await waitFor((s) => s.datasets.orders?.status === 'error' && !s.loading);
    expect(status.datasets.orders?.error).toMatch(
      /s3:\/\/lake-bucket\/orders\.csv: the object does not exist/,
    );
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it('abandons a load that a newer config makes obsolete and ends at the newest config', async () => {
    s3.objects.set('orders-a.csv', csv(10));
    s3.objects.set('orders-b.csv', csv(20, 21));
    s3.hold('orders-a.csv');
    const arrived = s3.arrival('orders-a.csv');
    await client.applyConfig(configWith(2, 'orders-a.csv'));
    await arrived;
    const newest = s3.arrival('orders-b.csv');
    await client.applyConfig(configWith(3, 'orders-b.csv'));
    // The held download of orders-a.csv was dropped: the newest config loads while it still hangs.
    await newest;
    s3.release();
    const status = await waitFor((s) => !s.loading && s.generation === 3);
    expect(status.datasets.orders).toMatchObject({ status: 'ready', rowCount: 2 });
    expect(await ids()).toEqual([20, 21]);
  });

  it('shows a new dataset pending, then loading, then ready, while the others stay ready', async () => {
    s3.objects.set('fresh.csv', csv(5, 6, 7));
    s3.hold('fresh.csv');
    const arrived = s3.arrival('fresh.csv');
    const next = configWith(4, 'orders-b.csv');
    next.config.datasets = [...(next.config.datasets ?? []), dataset('fresh', 'fresh.csv')];
    const accepted = await client.applyConfig(next);
    expect(accepted.datasets.fresh).toEqual({ status: 'pending' });
    expect(accepted.datasets.orders?.status).toBe('ready');
    expect(accepted.loading).toBe(true);
    await arrived;
    expect((await client.status()).datasets.fresh).toEqual({ status: 'loading' });
    s3.release();
    const status = await waitFor((s) => !s.loading && s.generation === 4);
    expect(status.datasets.fresh).toMatchObject({ status: 'ready', rowCount: 3 });
  });
});
