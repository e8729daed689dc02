// The lake server's SQL path against DuckDB itself, in the same process and run:
// - aggregate: one GROUP BY over a BENCH_ROWS-row parquet file (generated here with DuckDB),
//   through the lake server's HTTP API (LakeClient.sql: HTTP, auth, the read-only check, streaming,
//   JSON conversion, JSON.parse in the client) against the same query on a DuckDB instance of this
//   process with the same settings (memory limit, threads) and the table loaded the same way
//   (lake/load.ts readSql), its result read into JS values. The two alternate, BENCH_RUNS each after
//   warm-up; the figure is the ratio of the p50s (goal ≤ 1.2).
// - row encoding: RowEncoder (lake/json-values.ts) plus JSON.stringify over 10,000 rows of mixed
//   types already fetched from DuckDB, against DuckDB's own JSON converter (JsonDuckDBValueConverter:
//   all BIGINTs and decimals as strings, no ISO timestamps) plus JSON.stringify over the same chunks.
// Progress goes to stderr, figures to stdout.
//
// Run: npm run bench:lake
// Env: BENCH_ROWS   rows of the parquet file (default 10000000)
//      BENCH_RUNS   measured queries per side (default 20)
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, JsonDuckDBValueConverter } from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { LakeConfigSchema } from '../lake/config.js';
import { RowEncoder } from '../lake/json-values.js';
import type { JsonRow } from '../lake/json-values.js';
import { readSql } from '../lake/load.js';
import { startLakeServer } from '../lake/server.js';
import { LakeClient } from '../platform/lake-client.js';
import { createLogger } from '../platform/log.js';
import { SUMMARY_TABLE_HEAD, alternating, summaryRow } from './support/compare.js';
import { loadAverage as load, ratio } from './support/format.js';
import { progress, summarize } from './support/stats.js';
import type { Summary } from './support/stats.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUP = 3;
const ENCODE_ROWS = 10_000;
const ENCODE_RUNS = 30;
const MEMORY_LIMIT = '2GB';
const THREADS = availableParallelism();
const TOKEN = randomBytes(24).toString('base64url');
const QUERY = 'SELECT k % 100 AS g, count(*) AS n, sum(v) AS s FROM t GROUP BY g ORDER BY g';

const ms = (n: number): string => n.toFixed(1);

async function makeParquet(file: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(
      `COPY (SELECT range AS k, (range * 7919) % 100003 AS v FROM range(${ROWS})) TO '${file}' (FORMAT parquet)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** DuckDB in this process, set up as the lake sets up its own, with the table loaded the same way. */
async function directDuckDB(file: string): Promise<{ connection: DuckDBConnection; close: () => void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(`SET memory_limit = '${MEMORY_LIMIT}'`);
  await connection.run(`SET threads = ${THREADS}`);
  const source = {
    connector: 'file',
    path: file,
    isDirectory: false,
    format: 'parquet',
    hivePartitioning: false,
  } as const;
  await connection.run(`CREATE TABLE t AS ${readSql([file], source)}`);
  return {
    connection,
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function aggregate(dir: string): Promise<{ lake: Summary; direct: Summary }> {
  const file = join(dir, 'data', 't.parquet');
  await mkdir(join(dir, 'data'));
  progress(`writing a ${ROWS}-row parquet file`);
  await makeParquet(file);
  const lake = await startLakeServer(
    LakeConfigSchema.parse({
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
      AGENTRY_LAKE_CONNECTORS: 'file',
      AGENTRY_LAKE_FILE_ROOTS: join(dir, 'data'),
      AGENTRY_LAKE_MEMORY_LIMIT: MEMORY_LIMIT,
      AGENTRY_LAKE_THREADS: String(THREADS),
    }),
    { logger: createLogger({ level: 'warn' }) },
  );
  const direct = await directDuckDB(file);
  try {
    const client = new LakeClient({ endpoint: lake.url, token: TOKEN });
    progress('loading it into the lake');
    await client.applyConfig({
      generation: 1,
      config: { name: 'bench', datasets: [{ name: 't', from: `file://${file}` }] },
    });
    for (let status = await client.status(); status.loading || status.datasets.t?.status !== 'ready';) {
      if (status.datasets.t?.status === 'error') throw new Error(status.datasets.t.error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = await client.status();
    }
    const viaLake = () => client.sql({ query: QUERY });
    const viaDuckDB = async () => (await direct.connection.runAndReadAll(QUERY)).getRowObjects();
    const [lakeRows, directRows] = [(await viaLake()).rows.length, (await viaDuckDB()).length];
    if (lakeRows !== 100 || directRows !== 100)
      throw new Error(`expected 100 groups, got ${lakeRows} and ${directRows}`);
    progress(`measuring ${RUNS} queries each, alternating`);
    const { measured, baseline } = await alternating(RUNS, viaLake, viaDuckDB, WARMUP);
    return { lake: measured, direct: baseline };
  } finally {
    direct.close();
    await lake.stop();
  }
}

async function mixedChunks(): Promise<{
  chunks: DuckDBDataChunk[];
  encoder: () => RowEncoder;
  close: () => void;
}> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const result = await connection.stream(`
    SELECT i AS id, (1::BIGINT << 60) + i AS big, i * 0.5 AS ratio, (i * 1.25)::DECIMAL(12,2) AS amount,
           'name ' || i AS label, DATE '2024-01-01' + (i % 365)::INTEGER AS day,
           TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i) AS at_time, [i, i + 1] AS pair,
           {'k': i % 7, 'ok': i % 2 = 0} AS info, CASE WHEN i % 5 = 0 THEN NULL ELSE i END AS maybe
    FROM range(${ENCODE_ROWS}) r(i)`);
  const chunks: DuckDBDataChunk[] = [];
  for (
    let chunk = await result.fetchChunk();
    chunk !== null && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  )
    chunks.push(chunk);
  const names = result.deduplicatedColumnNames();
  const types = result.columnTypes();
  return {
    chunks,
    encoder: () => new RowEncoder(names, types),
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

async function encoding(): Promise<{ ours: Summary; duckdb: Summary; bytes: number }> {
  progress(`encoding ${ENCODE_ROWS} mixed rows, ${ENCODE_RUNS} times each`);
  const mixed = await mixedChunks();
  try {
    let bytes = 0;
    const ours = (): void => {
      const rows: JsonRow[] = [];
      const encoder = mixed.encoder();
      for (const chunk of mixed.chunks) encoder.encode(chunk, Number.MAX_SAFE_INTEGER, rows);
      bytes = JSON.stringify(rows).length;
    };
    const duckdb = (): void => {
      const rows = mixed.chunks.flatMap((chunk) => chunk.convertRows(JsonDuckDBValueConverter));
      JSON.stringify(rows);
    };
    const rate = (work: () => void): number => {
      const start = performance.now();
      work();
      return ENCODE_ROWS / ((performance.now() - start) / 1000);
    };
    for (let i = 0; i < 3; i++) {
      ours();
      duckdb();
    }
    const oursRates: number[] = [];
    const duckdbRates: number[] = [];
    for (let i = 0; i < ENCODE_RUNS; i++) {
      oursRates.push(rate(ours));
      duckdbRates.push(rate(duckdb));
    }
    return { ours: summarize(oursRates), duckdb: summarize(duckdbRates), bytes };
  } finally {
    mixed.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-bench-lake-'));
  console.log(`lake SQL bench: ${ROWS} rows, ${RUNS} runs, ${THREADS} threads, load average ${load()}\n`);
  try {
    const { lake, direct } = await aggregate(dir);
    const encoded = await encoding();
    console.log(`query: \`${QUERY}\`\n`);
    for (const line of SUMMARY_TABLE_HEAD) console.log(line);
    console.log(summaryRow('lake server over HTTP (ms)', lake, ms));
    console.log(summaryRow('DuckDB in process (ms)', direct, ms));
    console.log(`| **ratio lake / DuckDB (p50)** | **${ratio(lake.p50, direct.p50)}** (goal ≤ 1.2) | | | |`);
    const k = (n: number): string => `${Math.round(n / 1000)}k`;
    const { ours, duckdb } = encoded;
    console.log(summaryRow('RowEncoder + JSON.stringify (rows/s)', ours, k, { withP95: false }));
    console.log(summaryRow('DuckDB JSON converter + JSON.stringify (rows/s)', duckdb, k, { withP95: false }));
    console.log(
      `\n10,000 mixed rows are ${(encoded.bytes / 1024).toFixed(0)} KiB of JSON; load average at the end ${load()}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
