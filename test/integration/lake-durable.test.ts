import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Dataset } from '../../crds/context-lake/types.js';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeConfigRequest, LakeStatus } from '../../platform/lake-protocol.js';
import { motoDataset, motoS3Client, startMoto } from '../support/moto.js';
import type { RunningMoto } from '../support/moto.js';
import { startTestLake } from '../support/lake-server.js';
import { until } from '../support/until.js';

// The lake's database file and refresh by object (docs/adr/0010-durable-incremental-lake.md),
// against moto's S3: what a refresh fetches is read from the dataset's lastRefresh.

const TOKEN = randomBytes(24).toString('base64url');
const BUCKET = `durable-${randomBytes(4).toString('hex')}`;

let moto: RunningMoto;
let s3: S3Client;
let dir: string;
let lake: RunningLake;
let client: LakeClient;
let generation = 0;

const csv = (...ids: number[]) => `id,label\n${ids.map((id) => `${id},row ${id}`).join('\n')}\n`;

const put = async (key: string, body: string): Promise<string> => {
  const answer = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  return answer.ETag ?? '';
};

const dataset = (name: string, path: string, params: Record<string, string> = {}): Dataset =>
  motoDataset({ url: moto.url, bucket: BUCKET }, name, path, { file_format: 'csv', ...params });

const config = (): LakeConfigRequest['config'] => ({
  name: 'durable',
  datasets: [dataset('events', 'events/'), dataset('ticks', 'ticks.csv', { refresh_check_interval: '10s' })],
  views: [{ name: 'recent', sql: 'SELECT * FROM events WHERE id > 1' }],
});

const startLake = async (): Promise<void> => {
  lake = await startTestLake(TOKEN, { AGENTRY_LAKE_DATA_DIR: dir, AGENTRY_LAKE_PRIVATE_TARGETS: 'true' });
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
};

async function settled(done: (status: LakeStatus) => boolean = () => true): Promise<LakeStatus> {
  return until(
    'the lake to settle',
    async () => {
      const status = await client.status();
      return !status.loading && done(status) ? status : undefined;
    },
    60_000,
    50,
  );
}

async function push(): Promise<LakeStatus> {
  generation += 1;
  await client.applyConfig({ generation, config: config() });
  return settled((status) => status.generation === generation);
}

const ids = async (table = 'events'): Promise<unknown[]> =>
  (await client.sql({ query: `SELECT id FROM ${table} ORDER BY id` })).rows.map((row) => row.id);

/** Refreshes and waits until the dataset's lastRefresh is a new one. */
async function refreshed(name: string, ask: () => Promise<unknown>): Promise<LakeStatus['datasets'][string]> {
  const before = (await client.status()).datasets[name]?.lastRefresh?.at;
  await ask();
  const status = await settled((s) => {
    const state = s.datasets[name];
    return state?.status !== 'refreshing' && state?.lastRefresh?.at !== before;
  });
  const state = status.datasets[name];
  if (state === undefined) throw new Error(`no dataset ${name}`);
  return state;
}

beforeAll(async () => {
  moto = await startMoto();
  s3 = motoS3Client(moto.url);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await put('events/a.csv', csv(1, 2));
  await put('events/b.csv', csv(3));
  await put('events/c.csv', csv(4, 5));
  await put('ticks.csv', csv(100));
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-durable-'));
  await startLake();
  await push();
}, 120_000);

afterAll(async () => {
  await lake.stop();
  s3.destroy();
  await moto.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lake refresh by object', () => {
  it('records the objects a load fetched, with bytes, rows and source versions', async () => {
    const { datasets } = await client.status();
    expect(datasets.events).toMatchObject({
      status: 'ready',
      rowCount: 5,
      sources: { objects: 3 },
      lastRefresh: { kind: 'full', trigger: 'load', fetchedObjects: 3, removedObjects: 0 },
    });
    expect(datasets.events?.bytes).toBe(csv(1, 2).length + csv(3).length + csv(4, 5).length);
    expect(datasets.events?.loadedAt).toEqual(expect.any(String));
  });

  it('shows exactly the source columns through the dataset name', async () => {
    const answer = await client.sql({ query: 'SELECT * FROM events LIMIT 1' });
    expect(answer.columns.map((column) => column.name)).toEqual(['id', 'label']);
    // What `agentry lake schema` shows.
    const described = await client.sql({ query: 'DESCRIBE events' });
    expect(described.rows.map((row) => row.column_name)).toEqual(['id', 'label']);
  });

  it('fetches only a new object when a check compares the source with the table', async () => {
    await put('events/d.csv', csv(6));
    const state = await refreshed('events', () => client.refresh(['events']));
    expect(state.lastRefresh).toMatchObject({
      kind: 'incremental',
      trigger: 'request',
      fetchedObjects: 1,
      fetchedBytes: csv(6).length,
      removedObjects: 0,
    });
    expect(await ids()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('fetches only an object whose content changed, and replaces its rows', async () => {
    await put('events/c.csv', csv(40, 50));
    const state = await refreshed('events', () => client.refresh(['events']));
    expect(state.lastRefresh).toMatchObject({
      kind: 'incremental',
      fetchedObjects: 1,
      fetchedBytes: csv(40, 50).length,
      removedObjects: 0,
    });
    expect(await ids()).toEqual([1, 2, 3, 6, 40, 50]);
  });

  it('removes the rows of an object a removed event names, fetching nothing', async () => {
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'events/b.csv' }));
    const state = await refreshed('events', () =>
      client.refresh(['events'], {
        changes: [{ dataset: 'events', event: 'removed', bucket: BUCKET, key: 'events/b.csv' }],
      }),
    );
    expect(state.lastRefresh).toMatchObject({ kind: 'incremental', fetchedObjects: 0, removedObjects: 1 });
    expect(await ids()).toEqual([1, 2, 6, 40, 50]);
  });

  it('applies a created event once: the same event delivered again changes nothing', async () => {
    const etag = await put('events/e.csv', csv(7, 8));
    const event = {
      dataset: 'events',
      event: 'created' as const,
      bucket: BUCKET,
      key: 'events/e.csv',
      etag,
      sequencer: '0055AED6DCD90281E5',
    };
    const first = await refreshed('events', () => client.refresh(['events'], { changes: [event] }));
    expect(first.lastRefresh).toMatchObject({ kind: 'incremental', trigger: 'event', fetchedObjects: 1 });
    const again = await refreshed('events', () => client.refresh(['events'], { changes: [event] }));
    expect(again.lastRefresh).toMatchObject({ kind: 'check', fetchedObjects: 0, removedObjects: 0 });
    expect(again.rowCount).toBe(first.rowCount);
    expect(await ids()).toEqual([1, 2, 6, 7, 8, 40, 50]);
  });

  it("ignores a removed event of another bucket's key of the same name (a check instead)", async () => {
    const before = await ids();
    const state = await refreshed('events', () =>
      client.refresh(['events'], {
        changes: [{ dataset: 'events', event: 'removed', bucket: 'another-bucket', key: 'events/a.csv' }],
      }),
    );
    expect(state.lastRefresh).toMatchObject({ kind: 'check', trigger: 'request', removedObjects: 0 });
    expect(await ids()).toEqual(before);
  });

  it('reloads in full when a new object brings a column the table does not have', async () => {
    await put('events/f.csv', 'id,label,region\n9,row 9,eu\n');
    const state = await refreshed('events', () =>
      client.refresh(['events'], {
        changes: [{ dataset: 'events', event: 'created', bucket: BUCKET, key: 'events/f.csv' }],
      }),
    );
    expect(state.lastRefresh).toMatchObject({ kind: 'full', trigger: 'schema' });
    const answer = await client.sql({ query: 'SELECT id, region FROM events WHERE id = 9' });
    expect(answer.rows).toEqual([{ id: 9, region: 'eu' }]);
  });

  it('checks a dataset with refresh_check_interval on its own and picks up a change', async () => {
    await put('ticks.csv', csv(100, 101));
    const status = await until(
      'an interval check',
      async () => {
        const current = await client.status();
        const last = current.datasets.ticks?.lastRefresh;
        return last?.trigger === 'interval' && last.kind === 'incremental' ? current : undefined;
      },
      40_000,
      250,
    );
    expect(status.datasets.ticks?.lastRefresh).toMatchObject({ fetchedObjects: 1 });
    expect(await ids('ticks')).toEqual([100, 101]);
  }, 60_000);
});

describe('lake answers: freshness', () => {
  it('answers dataAsOf for the datasets a query reads through a view, and only those', async () => {
    const answer = await client.sql({ query: 'SELECT count(*) AS n FROM recent' });
    const { datasets } = await client.status();
    expect(answer.dataAsOf).toEqual({ events: datasets.events?.dataAsOf });
  });

  it('waitFor applies an object uploaded without any event before the query runs', async () => {
    await put('events/g.csv', csv(700));
    const answer = await client.sql({
      query: 'SELECT count(*)::INTEGER AS n FROM events WHERE id = 700',
      waitFor: [{ bucket: BUCKET, key: 'events/g.csv' }],
    });
    expect(answer.rows).toEqual([{ n: 1 }]);
  });

  it('waitFor an object the source does not hold answers 504 not_applied within the wait', async () => {
    const asked = client.sql({
      query: 'SELECT 1',
      waitFor: [{ key: 'events/nowhere.csv' }],
      waitTimeoutMs: 1500,
    });
    await expect(asked).rejects.toMatchObject({ status: 504, code: 'not_applied' });
    await expect(asked).rejects.toThrow(/events\/nowhere\.csv: absent from the source/);
  });

  it('waitFor an object no dataset holds answers 400 bad_request at once, without waiting', async () => {
    const started = Date.now();
    const asked = client.sql({
      query: 'SELECT 1',
      waitFor: [{ bucket: 'elsewhere', key: 'x.csv' }],
      waitTimeoutMs: 30_000,
    });
    await expect(asked).rejects.toMatchObject({ status: 400, code: 'bad_request' });
    await expect(asked).rejects.toThrow(/no dataset's source holds s3:\/\/elsewhere\/x\.csv/);
    expect(Date.now() - started).toBeLessThan(25_000); // it did not wait out the 30 s
  });
});

describe('lake restart', () => {
  it('serves the file at once after a restart, before any source is reachable', async () => {
    const before = await ids();
    await lake.stop();
    await moto.stop();
    await startLake();
    // Before any config: the file's datasets answer.
    expect(await ids()).toEqual(before);
    generation += 1;
    const accepted = await client.applyConfig({ generation, config: config() });
    expect(accepted.datasets.events?.status).toBe('ready');
    expect(await ids()).toEqual(before);
    // The background check cannot reach S3: an error in the status, the data still served.
    const status = await settled((s) => s.datasets.events?.status === 'error');
    expect(status.datasets.events?.rowCount).toBe(before.length);
    expect(await ids()).toEqual(before);
  }, 60_000);
});
