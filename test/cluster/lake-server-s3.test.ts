import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Dataset } from '../../crds/context-lake/types.js';
import { LakeConfigSchema } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { createLogger } from '../../platform/log.js';
import { motoDataset, motoEndpointParams, motoS3Client } from '../support/moto.js';
import { testCluster } from './support.js';

// The lake server against moto's S3 (the harness's): a parquet object, a csv prefix of several
// objects, a public object read anonymously, and a refresh that picks up a new object.

const TOKEN = randomBytes(24).toString('base64url');
const BUCKET = `lake-${randomBytes(5).toString('hex')}`;

let dir: string;
let lake: RunningLake;
let client: LakeClient;
let s3: S3Client;

const put = (key: string, body: string | Buffer, acl?: 'public-read') =>
  s3.send(
    new PutObjectCommand({
      Bucket: BUCKET,
      Key: key,
      Body: body,
      ...(acl === undefined ? {} : { ACL: acl }),
    }),
  );

async function parquetBytes(): Promise<Buffer> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const file = join(dir, 'orders.parquet');
  try {
    await connection.run(
      `COPY (SELECT range AS id, range * 10 AS cents FROM range(25)) TO '${file}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return readFile(file);
}

const s3Dataset = (name: string, path: string, params: Record<string, string> = {}): Dataset =>
  motoDataset({ url: testCluster().motoUrl, bucket: BUCKET }, name, path, params);

async function waitFor(done: (status: LakeStatus) => boolean): Promise<LakeStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await client.status();
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`status not reached: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-s3-'));
  s3 = motoS3Client(testCluster().motoUrl);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await put('tables/orders.parquet', await parquetBytes());
  await put('events/', Buffer.alloc(0)); // a console-made "folder"
  await put('events/_SUCCESS', 'done'); // a Spark marker, not data
  await put('events/part-0.csv', 'n,kind\n1,click\n2,view\n');
  await put('events/part-1.csv', 'n,kind\n3,click\n');
  await put('open/cities.csv', 'city\nLisbon\nOslo\n', 'public-read');
  lake = await startLakeServer(
    LakeConfigSchema.parse({
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
      AGENTRY_LAKE_THREADS: '1',
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
      // S3 is moto on a loopback or private address.
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
  await client.applyConfig({
    generation: 1,
    config: {
      name: 'moto',
      datasets: [
        s3Dataset('orders', 'tables/orders.parquet'),
        s3Dataset('events', 'events/', { file_format: 'csv' }),
        {
          name: 'cities',
          from: `s3://${BUCKET}/open/cities.csv`,
          params: { s3_auth: 'public', ...motoEndpointParams(testCluster().motoUrl) },
        },
        s3Dataset('absent', 'tables/absent.parquet'),
      ],
    },
  });
  await waitFor((status) => !status.loading && status.generation === 1);
}, 120_000);

afterAll(async () => {
  await lake.stop();
  s3.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe('lake server on moto S3', () => {
  it('loads a parquet object and a csv prefix of several objects to ready', async () => {
    const { datasets } = await client.status();
    expect(datasets.orders).toMatchObject({ status: 'ready', rowCount: 25 });
    expect(datasets.events).toMatchObject({ status: 'ready', rowCount: 3 });
    const sum = await client.sql({ query: 'SELECT sum(cents) AS total FROM orders' });
    expect(sum.rows).toEqual([{ total: 3000 }]);
  });

  it('reads a public-read object with unsigned requests', async () => {
    expect((await client.status()).datasets.cities).toMatchObject({ status: 'ready', rowCount: 2 });
  });

  it('reports a missing object as the dataset error, naming it', async () => {
    expect((await client.status()).datasets.absent).toMatchObject({
      status: 'error',
      error: `dataset absent: s3://${BUCKET}/tables/absent.parquet: the object does not exist (NoSuchKey)`,
    });
  });

  it('shows a new object under the prefix after a refresh', async () => {
    await put('events/part-2.csv', 'n,kind\n4,purchase\n');
    await client.refresh(['events']);
    await waitFor(
      (status) => status.datasets.events?.rowCount === 4 && status.datasets.events.status === 'ready',
    );
    const rows = await client.sql({ query: 'SELECT n, kind FROM events ORDER BY n' });
    expect(rows.rows).toEqual([
      { n: 1, kind: 'click' },
      { n: 2, kind: 'view' },
      { n: 3, kind: 'click' },
      { n: 4, kind: 'purchase' },
    ]);
  });
});
