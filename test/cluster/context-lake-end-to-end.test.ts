// The context lake end to end, through the public API: datasets in moto's S3 (from the cluster
// harness) configured with POST /v1/context-lake/datasets, the embedded operator starting a real
// `agentry lake` process on the first POST /sql, a view joining a parquet and a csv dataset, S3
// bucket notifications delivered by moto to the organization's SQS queue and turned into a refresh,
// and /stop then /sql waking the lake again. Only the store is embedded (the lake runs as a process,
// which KWOK's fake nodes could not run); every other part is the real one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { z } from 'zod';
import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../crds/context-lake/types.js';
import { bucketNotificationConfiguration } from '../../platform/lake-notifications/instructions.js';
import { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import { call } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { eventually, testCluster } from './support.js';

const CREDENTIALS = { accessKeyId: 'e2e-access-key', secretAccessKey: 'e2e-secret-never-shown' };
const BUCKET = `lake-e2e-${randomBytes(4).toString('hex')}`;
const ORG = 'lakeorg';

let stack: EmbeddedStack;
let queues: SqsNotificationQueues;
let s3: S3Client;
let key: string;
let dir: string;

const SqlAnswerSchema = z.object({
  rows: z.array(z.record(z.string(), z.unknown())),
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rowCount: z.number(),
  truncated: z.boolean(),
  elapsedMs: z.number(),
});

const StatusSchema = z.object({
  vmStatus: z.string(),
  datasets: z.record(
    z.string(),
    z.object({
      ok: z.boolean(),
      status: z.string(),
      connectorId: z.string(),
      notifications: z.boolean(),
      s3EventCount: z.number().optional(),
      s3LastEventAt: z.string().optional(),
      s3LastRefreshAt: z.string().optional(),
    }),
  ),
});

async function sql(query: string) {
  const res = await call(stack.api, '/v1/context-lake/sql', { method: 'POST', key, body: { query } });
  const body: unknown = await res.json();
  if (res.status !== 200) throw new Error(`POST /sql answered ${res.status}: ${JSON.stringify(body)}`);
  return SqlAnswerSchema.parse(body);
}

async function status() {
  const res = await call(stack.api, '/v1/context-lake/status', { key });
  expect(res.status).toBe(200);
  return StatusSchema.parse(await res.json());
}

async function parquetOfOrders(): Promise<Buffer> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const file = join(dir, 'orders.parquet');
  try {
    // 30 orders, customers 1..3 ten each, 100 cents apiece.
    await connection.run(
      `COPY (SELECT range AS id, (range % 3) + 1 AS customer_id, 100 AS cents FROM range(30)) TO '${file}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return readFile(file);
}

const put = (objectKey: string, body: string | Buffer) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: objectKey, Body: body }));

const s3Params = () => ({
  s3_auth: 'key',
  s3_key: CREDENTIALS.accessKeyId,
  s3_secret: CREDENTIALS.secretAccessKey,
  s3_endpoint: testCluster().motoUrl,
  allow_http: 'true',
  s3_region: 'us-east-1',
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-e2e-'));
  const endpoint = testCluster().motoUrl;
  s3 = new S3Client({ endpoint, region: 'us-east-1', credentials: CREDENTIALS, forcePathStyle: true });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await put('tables/orders.parquet', await parquetOfOrders());
  await put('customers/a.csv', 'customer_id,name\n1,Ada\n2,Grace\n');
  queues = new SqsNotificationQueues({
    region: 'us-east-1',
    endpoint,
    credentials: CREDENTIALS,
    queuePrefix: `agentry-e2e-${randomBytes(3).toString('hex')}-`,
  });
  stack = await startEmbeddedStack({
    prefix: 'agentry-lake-e2e-',
    lakeNotificationQueues: queues,
    contextLakes: { busyPollMs: 500 },
  });
  key = await stack.api.key({ org: ORG });
}, 120_000);

afterAll(async () => {
  await stack.stop();
  queues.close();
  s3.destroy();
  await rm(dir, { recursive: true, force: true });
}, 120_000);

describe('the context lake through the API', () => {
  let queueArn = '';

  it('saves a parquet dataset, and a csv prefix with notifications that answers the queue to configure', async () => {
    const orders = await call(stack.api, '/v1/context-lake/datasets', {
      method: 'POST',
      key,
      body: { name: 'orders', from: `s3://${BUCKET}/tables/orders.parquet`, params: s3Params() },
    });
    expect(orders.status).toBe(201);
    const customers = await call(stack.api, '/v1/context-lake/datasets', {
      method: 'POST',
      key,
      body: {
        name: 'customers',
        from: `s3://${BUCKET}/customers/`,
        notifications: true,
        params: { ...s3Params(), file_format: 'csv' },
      },
    });
    expect(customers.status).toBe(201);
    const answer = z
      .object({
        ok: z.literal(true),
        notifications: z.object({
          queueArn: z.string(),
          region: z.string(),
          instructions: z.array(z.string()),
        }),
      })
      .parse(await customers.json());
    expect(answer.notifications.region).toBe('us-east-1');
    expect(answer.notifications.instructions.join('\n')).toContain(BUCKET);
    queueArn = answer.notifications.queueArn;
    const view = await call(stack.api, '/v1/context-lake/views', {
      method: 'POST',
      key,
      body: {
        name: 'revenue_by_customer',
        sql: 'SELECT c.name, sum(o.cents) AS cents FROM orders o JOIN customers c USING (customer_id) GROUP BY c.name',
      },
    });
    expect(view.status).toBe(201);
  });

  it('starts the paused lake on the first query and joins the datasets through the view', async () => {
    expect((await status()).vmStatus).toBe('not_provisioned');
    const answer = await sql('SELECT name, cents FROM revenue_by_customer ORDER BY name');
    expect(answer.rows).toEqual([
      { name: 'Ada', cents: 1000 },
      { name: 'Grace', cents: 1000 },
    ]);
    expect(answer.columns.map((column) => column.name)).toEqual(['name', 'cents']);
    expect(answer.truncated).toBe(false);
  }, 200_000);

  it('shows the lake running with both datasets ready', async () => {
    const seen = await eventually('both datasets ready', async () => {
      const current = await status();
      return current.datasets.orders?.status === 'ready' && current.datasets.customers?.status === 'ready'
        ? current
        : undefined;
    });
    expect(seen.vmStatus).toBe('running');
    expect(seen.datasets.orders).toMatchObject({ ok: true, connectorId: 's3', notifications: false });
    expect(seen.datasets.customers).toMatchObject({ ok: true, connectorId: 's3', notifications: true });
  });

  it('never shows the dataset credential in the config or the stored resource', async () => {
    const config = await call(stack.api, '/v1/context-lake/config', { key });
    const text = await config.text();
    expect(text).not.toContain(CREDENTIALS.secretAccessKey);
    expect(text).toContain('${secrets:');
    const namespaces = (await stack.api.store.list(ContextLakeType)).items.map(
      (lake) => lake.metadata.namespace,
    );
    const lake = await stack.api.store.get(ContextLakeType, namespaces[0], CONTEXT_LAKE_NAME);
    expect(JSON.stringify(lake)).not.toContain(CREDENTIALS.secretAccessKey);
  });

  it('counts a bucket event and serves the new object rows within seconds, without a restart', async () => {
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: BUCKET,
        NotificationConfiguration: bucketNotificationConfiguration(queueArn, 'customers/'),
      }),
    );
    await put('customers/b.csv', 'customer_id,name\n3,Barbara\n');
    const rows = await eventually(
      'the new customer is queryable',
      async () => {
        const answer = await sql('SELECT name FROM customers ORDER BY customer_id');
        return answer.rowCount === 3 ? answer.rows : undefined;
      },
      60_000,
    );
    expect(rows).toEqual([{ name: 'Ada' }, { name: 'Grace' }, { name: 'Barbara' }]);
    const seen = await status();
    expect(seen.datasets.customers?.s3EventCount).toBeGreaterThanOrEqual(1);
    expect(seen.datasets.customers?.s3LastEventAt).toEqual(expect.any(String));
    expect(seen.datasets.customers?.s3LastRefreshAt).toEqual(expect.any(String));
    expect(seen.datasets.orders?.s3EventCount ?? 0).toBe(0);
  }, 90_000);

  it('pauses on /stop with every dataset unknown, and the next query starts it again', async () => {
    const stop = await call(stack.api, '/v1/context-lake/stop', { method: 'POST', key });
    expect(stop.status).toBe(202);
    const paused = await eventually('the lake paused', async () => {
      const current = await status();
      return current.vmStatus === 'paused' ? current : undefined;
    });
    expect(Object.values(paused.datasets).map((dataset) => dataset.status)).toEqual(['unknown', 'unknown']);
    const answer = await sql('SELECT count(*) AS n FROM orders');
    expect(answer.rows).toEqual([{ n: 30 }]);
    expect((await status()).vmStatus).toBe('running');
  }, 200_000);
});
