// The context lake through the public API, on the embedded stack (API server, operator, a real
// `agentry lake` process) with moto for S3 and SQS (from the cluster harness's tool cache):
// - SQL overhead: one GROUP BY over a BENCH_ROWS-row parquet dataset through POST
//   /v1/context-lake/sql (auth, the API's proxy, the lake's HTTP API, JSON both ways) against the
//   same query on DuckDB in this process with the table loaded from the same file. The two
//   alternate, BENCH_RUNS each after warm-up; the figure is the ratio of the p50s (goal ≤ 1.2).
// - refresh latency: PutObject of a new csv under a prefix whose bucket notifies the organization's
//   queue, until POST /sql sees its row (moto → SQS long poll → operator → lake refresh → swap),
//   BENCH_REFRESHES times; p50 and p95.
// Progress goes to stderr, figures to stdout.
//
// Run: npm run bench:lake-api
// Env: BENCH_ROWS (default 10000000), BENCH_RUNS (default 20), BENCH_REFRESHES (default 15)
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
import { bucketNotificationConfiguration } from '../platform/lake-notifications/instructions.js';
import { SqsNotificationQueues } from '../platform/lake-notifications/queues.js';
import { startMoto } from '../test/cluster/harness/cluster.js';
import { buildTools } from '../test/cluster/harness/tools.js';
import { call } from '../test/support/api-server.js';
import { startEmbeddedStack } from '../test/support/embedded-stack.js';
import type { EmbeddedStack } from '../test/support/embedded-stack.js';
import { SUMMARY_TABLE_HEAD, alternating, summaryRow } from './support/compare.js';
import { loadAverage as load, ratio } from './support/format.js';
import { progress, summarize } from './support/stats.js';
import type { Summary } from './support/stats.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const REFRESHES = Number(process.env.BENCH_REFRESHES ?? 15);
const QUERY = 'SELECT k % 100 AS g, count(*) AS n, sum(v) AS s FROM t GROUP BY g ORDER BY g';
const CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench-secret' };
const BUCKET = `bench-lake-${randomBytes(4).toString('hex')}`;

const SqlAnswerSchema = z.object({ rows: z.array(z.record(z.string(), z.unknown())) });
const ArnSchema = z.object({ notifications: z.object({ queueArn: z.string() }) });

const ms = (n: number): string => n.toFixed(1);

interface World {
  stack: EmbeddedStack;
  s3: S3Client;
  key: string;
  endpoint: string;
}

async function sql(world: World, query: string): Promise<Record<string, unknown>[]> {
  const res = await call(world.stack.api, '/v1/context-lake/sql', {
    method: 'POST',
    key: world.key,
    body: { query },
  });
  if (res.status !== 200) throw new Error(`POST /sql answered ${res.status}: ${await res.text()}`);
  return SqlAnswerSchema.parse(await res.json()).rows;
}

async function saveDataset(world: World, body: Record<string, unknown>): Promise<unknown> {
  const res = await call(world.stack.api, '/v1/context-lake/datasets', {
    method: 'POST',
    key: world.key,
    body,
  });
  if (res.status !== 201) throw new Error(`POST /datasets answered ${res.status}: ${await res.text()}`);
  return res.json();
}

const s3Params = (endpoint: string) => ({
  s3_auth: 'key',
  s3_key: CREDENTIALS.accessKeyId,
  s3_secret: CREDENTIALS.secretAccessKey,
  s3_endpoint: endpoint,
  allow_http: 'true',
});

async function sqlOverhead(world: World, dir: string): Promise<{ api: Summary; direct: Summary }> {
  const file = join(dir, 't.parquet');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    progress(`writing a ${ROWS}-row parquet file and putting it in the bucket`);
    await connection.run(
      `COPY (SELECT range AS k, (range * 7919) % 100003 AS v FROM range(${ROWS})) TO '${file}' (FORMAT parquet)`,
    );
    await connection.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${file}')`);
    await world.s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'tables/t.parquet', Body: await readFile(file) }),
    );
    await saveDataset(world, {
      name: 't',
      from: `s3://${BUCKET}/tables/t.parquet`,
      params: s3Params(world.endpoint),
    });
    progress('first query: starts the lake, which loads the dataset');
    const viaApi = () => sql(world, QUERY);
    const viaDuckDB = async () => (await connection.runAndReadAll(QUERY)).getRowObjects();
    const [apiRows, directRows] = [(await viaApi()).length, (await viaDuckDB()).length];
    if (apiRows !== 100 || directRows !== 100)
      throw new Error(`expected 100 groups, got ${apiRows}, ${directRows}`);
    progress(`measuring ${RUNS} queries each, alternating`);
    const { measured, baseline } = await alternating(RUNS, viaApi, viaDuckDB, 3);
    return { api: measured, direct: baseline };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function refreshLatency(world: World): Promise<Summary> {
  const put = (key: string, body: string) =>
    world.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  await put('events/0.csv', 'id\n0\n');
  const saved = ArnSchema.parse(
    await saveDataset(world, {
      name: 'events',
      from: `s3://${BUCKET}/events/`,
      notifications: true,
      params: { ...s3Params(world.endpoint), file_format: 'csv' },
    }),
  );
  await world.s3.send(
    new PutBucketNotificationConfigurationCommand({
      Bucket: BUCKET,
      NotificationConfiguration: bucketNotificationConfiguration(saved.notifications.queueArn, 'events/'),
    }),
  );
  const count = async () => Number((await sql(world, 'SELECT count(*) AS n FROM events'))[0]?.n ?? -1);
  while ((await count()) !== 1) await new Promise((resolve) => setTimeout(resolve, 100));
  progress(`measuring ${REFRESHES} put → refreshed query results`);
  const times: number[] = [];
  for (let i = 1; i <= REFRESHES; i++) {
    const start = performance.now();
    await put(`events/${i}.csv`, `id\n${i}\n`);
    const deadline = start + 60_000;
    while ((await count()) !== i + 1) {
      if (performance.now() > deadline) throw new Error(`object ${i} not queryable within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    times.push(performance.now() - start);
  }
  return summarize(times);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-bench-lake-api-'));
  progress('building or reusing moto from the harness tool cache');
  const tools = await buildTools(join(dir, 'tools.env'));
  const moto = await startMoto(tools, dir);
  const queues = new SqsNotificationQueues({
    region: 'us-east-1',
    endpoint: moto.url,
    credentials: CREDENTIALS,
    queuePrefix: `bench-${randomBytes(3).toString('hex')}-`,
  });
  const s3 = new S3Client({
    endpoint: moto.url,
    region: 'us-east-1',
    credentials: CREDENTIALS,
    forcePathStyle: true,
  });
  const stack = await startEmbeddedStack({
    prefix: 'agentry-bench-lake-api-',
    lakeNotificationQueues: queues,
    contextLakes: { busyPollMs: 200 },
  });
  console.log(`context lake through the API: ${ROWS} rows, ${RUNS} runs, load average ${load()}\n`);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const world: World = { stack, s3, key: await stack.api.key({ org: 'bench' }), endpoint: moto.url };
    const { api, direct } = await sqlOverhead(world, dir);
    const refresh = await refreshLatency(world);
    console.log(`query: \`${QUERY}\`\n`);
    for (const line of SUMMARY_TABLE_HEAD) console.log(line);
    console.log(summaryRow('POST /v1/context-lake/sql (ms)', api, ms));
    console.log(summaryRow('DuckDB in process (ms)', direct, ms));
    console.log(`| **ratio API / DuckDB (p50)** | **${ratio(api.p50, direct.p50)}** (goal ≤ 1.2) | | | |`);
    console.log(summaryRow('S3 put → refreshed query result (ms)', refresh, ms));
    console.log(`\nload average at the end ${load()}`);
  } finally {
    await stack.stop();
    queues.close();
    s3.destroy();
    try {
      process.kill(-moto.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
