// The durable, incremental lake (docs/adr/0010-durable-incremental-lake.md) against moto's S3,
// in one run:
// - wake: a lake server stopped after loading a parquet dataset of BENCH_WAKE_MB (each size in
//   turn, split into 8 objects) starts again on its data directory (the database file) → config
//   pushed → first answer to `SELECT count(*)`; against a start on an empty data directory, which
//   downloads everything again (the old behaviour: an in-memory lake re-downloaded on every wake).
// - one new object into a prefix of BENCH_PREFIX_OBJECTS csv objects: the refresh an S3 event
//   causes (`changes`), a listing check (`auto` without changes) and a full reload (`mode: full`),
//   each read from the dataset's lastRefresh (objects and bytes fetched, ms).
// Progress goes to stderr, the report (markdown) to stdout.
//
// Run: node --import ./test/support/register-swc.mjs bench/lake-durable.ts
// Env: BENCH_WAKE_MB         sizes in MB, comma separated (default 10,1024)
//      BENCH_PREFIX_OBJECTS  objects in the prefix (default 1000; 0 leaves that part out)
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Dataset } from '../crds/context-lake/types.js';
import type { RunningLake } from '../lake/server.js';
import { LakeClient } from '../platform/lake-client.js';
import type { LakeRefreshOutcome, LakeStatus } from '../platform/lake-protocol.js';
import { startTestLake } from '../test/support/lake-server.js';
import { motoDataset, motoS3Client, startMoto } from '../test/support/moto.js';
import { loadAverage, ms, ratio } from './support/format.js';

const WAKE_MB = (process.env.BENCH_WAKE_MB ?? '10,1024').split(',').map(Number);
const PREFIX_OBJECTS = Number(process.env.BENCH_PREFIX_OBJECTS ?? 1000);
const PARTS = 8;
const TOKEN = randomBytes(24).toString('base64url');
const BUCKET = 'bench-durable';
/** Bytes of parquet per row of makePart's data (measured: md5 text and a double compress little). */
const BYTES_PER_ROW = 45;

const progress = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

let work: string;
let s3: S3Client;
let motoUrl: string;
let generation = 0;

const dataset = (name: string, path: string, format: 'csv' | 'parquet'): Dataset =>
  motoDataset({ url: motoUrl, bucket: BUCKET }, name, path, { file_format: format });

async function makePart(file: string, rows: number, offset: number): Promise<Buffer> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT range AS id, md5(range::VARCHAR) AS h, random() AS r FROM range(${offset}, ${offset + rows}))
         TO '${file}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  const bytes = await readFile(file);
  await rm(file);
  return bytes;
}

/** Uploads ~`mb` MB of parquet in PARTS objects under `prefix`; answers the rows. */
async function uploadParquet(prefix: string, mb: number): Promise<number> {
  const rowsPerPart = Math.ceil((mb * 1024 * 1024) / BYTES_PER_ROW / PARTS);
  let bytes = 0;
  for (let part = 0; part < PARTS; part += 1) {
    const body = await makePart(join(work, `part-${part}.parquet`), rowsPerPart, part * rowsPerPart);
    bytes += body.length;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}part-${part}.parquet`, Body: body }));
  }
  progress(`  uploaded ${(bytes / 1024 / 1024).toFixed(0)} MB under ${prefix}`);
  return rowsPerPart * PARTS;
}

async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 30 * 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let said = Date.now();
  for (;;) {
    const value = await check().catch((err: unknown) => {
      if (Date.now() - said > 10_000) {
        said = Date.now();
        progress(`  still waiting: ${err instanceof Error ? err.message : String(err)}`);
      }
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Start → config → the first answer with all rows; the lake stays running (caller stops it). */
async function wake(
  dir: string,
  datasets: Dataset[],
  name: string,
  rows: number,
): Promise<{ ms: number; lake: RunningLake }> {
  const started = performance.now();
  const lake = await startTestLake(TOKEN, {
    AGENTRY_LAKE_DATA_DIR: dir,
    AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
    AGENTRY_LAKE_MEMORY_LIMIT: '1GB',
    AGENTRY_LAKE_THREADS: '2',
  });
  const client = new LakeClient({ endpoint: lake.url, token: TOKEN, timeoutMs: 60_000 });
  generation += 1;
  await client.applyConfig({ generation, config: { name: 'bench', datasets } });
  await until(async () => {
    const answer = await client.sql({ query: `SELECT count(*)::BIGINT AS n FROM ${name}` });
    return Number(answer.rows[0]?.n) === rows ? true : undefined;
  });
  return { ms: performance.now() - started, lake };
}

async function wakeRows(): Promise<string[]> {
  const lines = [
    '| parquet | wake from the database file | wake re-downloading (empty data dir) | ratio |',
    '|---|---|---|---|',
  ];
  for (const mb of WAKE_MB) {
    progress(`wake, ${mb} MB`);
    const prefix = `wake-${mb}/`;
    const rows = await uploadParquet(prefix, mb);
    const datasets = [dataset('big', prefix, 'parquet')];
    const durableDir = await mkdtemp(join(work, 'durable-'));
    const first = await wake(durableDir, datasets, 'big', rows);
    progress(`  first load ${ms(first.ms)}`);
    await first.lake.stop();
    const durable = await wake(durableDir, datasets, 'big', rows);
    await durable.lake.stop();
    progress(`  durable wake ${ms(durable.ms)}`);
    const freshDir = await mkdtemp(join(work, 'fresh-'));
    const fresh = await wake(freshDir, datasets, 'big', rows);
    await fresh.lake.stop();
    progress(`  re-download wake ${ms(fresh.ms)}`);
    await rm(durableDir, { recursive: true, force: true });
    await rm(freshDir, { recursive: true, force: true });
    lines.push(
      `| ${mb} MB (${PARTS} objects, ${rows} rows) | ${ms(durable.ms)} | ${ms(fresh.ms)} | ${ratio(fresh.ms, durable.ms, 1)} faster |`,
    );
  }
  return lines;
}

/** Asks for a refresh and answers the dataset's next lastRefresh. */
async function refreshOutcome(client: LakeClient, ask: () => Promise<unknown>): Promise<LakeRefreshOutcome> {
  const before = (await client.status()).datasets.many?.lastRefresh?.at;
  await ask();
  const status: LakeStatus = await until(async () => {
    const current = await client.status();
    const last = current.datasets.many?.lastRefresh;
    return !current.loading && last !== undefined && last.at !== before ? current : undefined;
  });
  const outcome = status.datasets.many?.lastRefresh;
  if (outcome === undefined) throw new Error('no refresh');
  return outcome;
}

async function prefixRows(): Promise<string[]> {
  progress(`one new object into a prefix of ${PREFIX_OBJECTS}`);
  const csv = (at: number): string =>
    `id,label\n${Array.from({ length: 50 }, (_, i) => `${at * 50 + i},row ${at}-${i}`).join('\n')}\n`;
  for (let at = 0; at < PREFIX_OBJECTS; at += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, PREFIX_OBJECTS - at) }, (_, i) =>
        s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: `many/${String(at + i).padStart(5, '0')}.csv`,
            Body: csv(at + i),
          }),
        ),
      ),
    );
  const dir = await mkdtemp(join(work, 'many-'));
  const { lake } = await wake(dir, [dataset('many', 'many/', 'csv')], 'many', PREFIX_OBJECTS * 50);
  const client = new LakeClient({ endpoint: lake.url, token: TOKEN, timeoutMs: 60_000 });
  const put = async (at: number): Promise<string> =>
    (
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `many/${String(at).padStart(5, '0')}.csv`,
          Body: csv(at),
        }),
      )
    ).ETag ?? '';
  const key = (at: number): string => `many/${String(at).padStart(5, '0')}.csv`;
  const eventEtag = await put(PREFIX_OBJECTS);
  const event = await refreshOutcome(client, () =>
    client.refresh(['many'], {
      changes: [
        { dataset: 'many', event: 'created', bucket: BUCKET, key: key(PREFIX_OBJECTS), etag: eventEtag },
      ],
    }),
  );
  await put(PREFIX_OBJECTS + 1);
  const check = await refreshOutcome(client, () => client.refresh(['many']));
  await put(PREFIX_OBJECTS + 2);
  const full = await refreshOutcome(client, () => client.refresh(['many'], { mode: 'full' }));
  await lake.stop();
  await rm(dir, { recursive: true, force: true });
  const row = (what: string, outcome: LakeRefreshOutcome): string =>
    `| ${what} | ${outcome.kind} | ${outcome.fetchedObjects} | ${outcome.fetchedBytes} | ${ms(outcome.ms)} |`;
  return [
    '| refresh | kind | objects fetched | bytes fetched | time |',
    '|---|---|---|---|---|',
    row('S3 event for the new object (`changes`)', event),
    row('`auto` without changes (listing check)', check),
    row('`mode: full`', full),
    '',
    `event vs full: ${ratio(full.fetchedBytes, event.fetchedBytes, 0)} fewer bytes, ${ratio(full.ms, event.ms, 1)} faster; ` +
      `listing check vs full: ${ratio(full.fetchedBytes, check.fetchedBytes, 0)} fewer bytes, ${ratio(full.ms, check.ms, 1)} faster`,
  ];
}

async function main(): Promise<void> {
  work = await mkdtemp(join(tmpdir(), 'agentry-bench-durable-'));
  const moto = await startMoto();
  motoUrl = moto.url;
  s3 = motoS3Client(motoUrl);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const prefix = PREFIX_OBJECTS > 0 ? await prefixRows() : [];
    const wakes = await wakeRows();
    process.stdout.write([`load average ${loadAverage()}`, '', ...wakes, '', ...prefix, ''].join('\n'));
  } finally {
    s3.destroy();
    await moto.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
