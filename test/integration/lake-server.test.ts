import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { LakeConfigSchema } from '../../lake/config.js';
import { DATABASE_FILE } from '../../lake/engine.js';
import type { LakeServerConfig } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import type { LakeConfigRequest, LakeStatus } from '../../platform/lake-protocol.js';
import { createLogger } from '../../platform/log.js';

const TOKEN = randomBytes(24).toString('base64url'); // 32 characters
const BIG = 2n ** 60n;

let dir: string;
let lake: RunningLake;
let client: LakeClient;

/** Writes test data with DuckDB itself, as a user's pipeline would. */
async function writeData(target: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (
        SELECT i AS id, i % 3 AS customer_id, (i * 1.25)::DECIMAL(10,2) AS amount,
               (${BIG} + i)::BIGINT AS big, DATE '2024-03-01' + i::INTEGER AS day,
               TIMESTAMP '2024-03-01 12:00:00.5' + to_seconds(i) AS placed_at
        FROM range(10) t(i)
      ) TO '${target}/orders.parquet' (FORMAT parquet)`);
    await connection.run(`COPY (
        SELECT * FROM (VALUES (0, 'Ada'), (1, 'Grace'), (2, 'Edsger')) c(customer_id, name)
      ) TO '${target}/customers.csv' (HEADER, DELIMITER ',')`);
    for (const year of [2023, 2024]) {
      await mkdir(join(target, 'sales', `year=${year}`), { recursive: true });
      await connection.run(`COPY (SELECT 'store ' || i AS store, i * 10 AS units FROM range(${year - 2021}) t(i))
        TO '${target}/sales/year=${year}/part.csv' (HEADER)`);
    }
    await mkdir(join(target, 'events'));
    for (const part of [0, 1])
      await connection.run(`COPY (SELECT ${part} * 10 + i AS n, 'e' || i AS label FROM range(4) t(i))
        TO '${target}/events/part-${part}.json' (FORMAT json)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function lakeConfig(env: Record<string, string>): LakeServerConfig {
  return LakeConfigSchema.parse({
    AGENTRY_LAKE_TOKEN: TOKEN,
    AGENTRY_LAKE_HOST: '127.0.0.1',
    AGENTRY_LAKE_PORT: '0',
    ...env,
  });
}

async function waitForStatus(
  lakeClient: LakeClient,
  done: (status: LakeStatus) => boolean,
  timeoutMs = 30_000,
): Promise<LakeStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await lakeClient.status();
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`lake status not reached: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const config = (data: string): LakeConfigRequest => ({
  generation: 1,
  config: {
    name: 'test',
    datasets: [
      { name: 'orders', from: `file://${data}/orders.parquet` },
      { name: 'customers', from: `file://${data}/customers.csv` },
      { name: 'events', from: `file://${data}/events/`, params: { file_format: 'json' } },
      { name: 'missing', from: `file://${data}/nothing-here.parquet` },
      { name: 'garbled', from: `file://${data}/customers.csv`, params: { file_format: 'parquet' } },
      { name: 'notdir', from: `file://${data}/customers.csv/`, params: { file_format: 'csv' } },
      {
        name: 'sales',
        from: `file://${data}/sales/`,
        params: { file_format: 'csv', hive_partitioning_enabled: 'true' },
      },
    ],
    views: [
      {
        name: 'spend',
        sql: 'SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c USING (customer_id) GROUP BY c.name',
      },
      { name: 'top_spender', sql: 'SELECT name FROM spend ORDER BY total DESC LIMIT 1' },
      { name: 'broken', sql: 'SELECT * FROM no_such_table' },
    ],
  },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-'));
  const data = join(dir, 'data');
  await mkdir(data);
  await writeData(data);
  lake = await startLakeServer(
    lakeConfig({
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
      AGENTRY_LAKE_CONNECTORS: 's3,https,file',
      AGENTRY_LAKE_FILE_ROOTS: data,
      AGENTRY_LAKE_ROW_LIMIT: '1000',
      AGENTRY_LAKE_MEMORY_LIMIT: '512MB',
      AGENTRY_LAKE_THREADS: '2',
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
}, 60_000);

afterAll(async () => {
  await lake.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lake server: before any config', () => {
  it('answers SQL with 503 not_loaded', async () => {
    const failure = await client.sql({ query: 'SELECT 1' }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(LakeRequestError);
    expect(failure).toMatchObject({ status: 503, code: 'not_loaded' });
  });

  it('reports generation null and no datasets', async () => {
    expect(await client.status()).toMatchObject({
      generation: null,
      loading: false,
      datasets: {},
      views: {},
    });
  });
});

describe('lake server: loading a config', () => {
  let status: LakeStatus;

  beforeAll(async () => {
    const accepted = await client.applyConfig(config(join(dir, 'data')));
    expect(accepted.generation).toBe(1);
    status = await waitForStatus(client, (s) => !s.loading && s.generation === 1);
  }, 60_000);

  it('loads parquet, csv and a directory of json files to ready with their row counts', () => {
    expect(status.datasets.orders).toMatchObject({ status: 'ready', rowCount: 10 });
    expect(status.datasets.customers).toMatchObject({ status: 'ready', rowCount: 3 });
    expect(status.datasets.events).toMatchObject({ status: 'ready', rowCount: 8 });
    expect(status.datasets.orders?.loadedAt).toMatch(/Z$/);
  });

  it('marks only the bad dataset error, naming the dataset and the file', () => {
    expect(status.datasets.missing?.status).toBe('error');
    expect(status.datasets.missing?.error).toMatch(
      /dataset missing: file:\/\/.*nothing-here\.parquet: no such file/,
    );
  });

  it('names the source file, not the lake own copy, when DuckDB cannot read the data', () => {
    expect(status.datasets.garbled?.status).toBe('error');
    expect(status.datasets.garbled?.error).toMatch(
      /^dataset garbled: cannot read the data as parquet: .*customers\.csv/,
    );
    expect(status.datasets.garbled?.error).not.toContain(join(dir, 'lake'));
  });

  it('says why a load failed without a server path beside the dataset’s own from', () => {
    const error = status.datasets.notdir?.error ?? '';
    expect(error).toMatch(/^dataset notdir: file:\/\/.*customers\.csv\/: not a directory$/);
    expect(error.replaceAll(`file://${join(dir, 'data')}`, '')).not.toContain(dir);
  });

  it('creates views after the datasets, a view over a view included, and reports a broken one', () => {
    expect(status.views).toEqual({
      spend: { ok: true },
      top_spender: { ok: true },
      broken: { ok: false, error: expect.stringMatching(/no_such_table/) as unknown as string },
    });
  });

  it('joins two datasets through a view', async () => {
    const result = await client.sql({ query: 'SELECT name, total FROM spend ORDER BY name' });
    expect(result.rows).toEqual([
      { name: 'Ada', total: 22.5 },
      { name: 'Edsger', total: 18.75 },
      { name: 'Grace', total: 15 },
    ]);
    expect(result.columns).toEqual([
      { name: 'name', type: 'VARCHAR' },
      { name: 'total', type: 'DECIMAL(38,2)' },
    ]);
    expect(result).toMatchObject({ rowCount: 3, truncated: false });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('reads key=value folders as columns when hive partitioning is enabled', async () => {
    const result = await client.sql({
      query: 'SELECT year, count(*) AS stores FROM sales GROUP BY year ORDER BY year',
    });
    expect(result.rows).toEqual([
      { year: 2023, stores: 2 },
      { year: 2024, stores: 3 },
    ]);
  });

  it('answers a BIGINT beyond 2^53 as a string, dates and timestamps as ISO text', async () => {
    const result = await client.sql({
      query: 'SELECT id, big, amount, day, placed_at FROM orders WHERE id = 2',
    });
    expect(result.rows).toEqual([
      {
        id: 2,
        big: (BIG + 2n).toString(),
        amount: 2.5,
        day: '2024-03-03',
        placed_at: '2024-03-01T12:00:02.500Z',
      },
    ]);
  });

  it('records when the last query came', async () => {
    const before = Date.now();
    await client.sql({ query: 'SELECT 1' });
    const { lastQueryAt } = await client.status();
    expect(Date.parse(lastQueryAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
  });

  it('cuts a result at the row limit and says so', async () => {
    const cut = await client.sql({ query: 'SELECT range AS n FROM range(5000)' });
    expect(cut).toMatchObject({ rowCount: 1000, truncated: true });
    expect(cut.rows.at(-1)).toEqual({ n: 999 });
    const exact = await client.sql({ query: 'SELECT range AS n FROM range(1000)' });
    expect(exact).toMatchObject({ rowCount: 1000, truncated: false });
    const asked = await client.sql({ query: 'SELECT range AS n FROM range(5000)', rowLimit: 10 });
    expect(asked).toMatchObject({ rowCount: 10, truncated: true });
  });

  it('answers an engine error as 400 sql_error with DuckDB message', async () => {
    const failure = await client.sql({ query: 'SELECT * FROM nowhere' }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ status: 400, code: 'sql_error' });
    expect((failure as Error).message).toMatch(/Table with name nowhere does not exist/);
  });

  it('refuses statements that would change the lake', async () => {
    for (const query of [
      'DROP TABLE orders',
      'CREATE TABLE x AS SELECT 1',
      'DELETE FROM orders',
      'SELECT 1; SELECT 2',
    ]) {
      await expect(client.sql({ query })).rejects.toMatchObject({ status: 400, code: 'sql_error' });
    }
    expect((await client.sql({ query: 'SELECT count(*) AS n FROM orders' })).rows).toEqual([{ n: 10 }]);
  });
});

describe('lake server: lockdown', () => {
  it('refuses every way out of the datasets with 400 sql_error and writes nothing', async () => {
    const out = join(dir, `escape-${randomBytes(4).toString('hex')}`);
    const statements = [
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT * FROM read_text('/etc/passwd')",
      `COPY (SELECT 1) TO '${out}.csv'`,
      `ATTACH '${out}.db'`,
      'INSTALL httpfs',
      'LOAD httpfs',
      'SET enable_external_access=true',
      'SET lock_configuration=false',
      "SELECT * FROM read_parquet('https://example.com/x.parquet')",
      `SELECT * FROM read_text('${join(dir, 'lake', 'staging')}/../../data/customers.csv')`,
      // The database file: DuckDB itself would let a COPY create its WAL.
      `COPY (SELECT 1) TO '${join(dir, 'lake', DATABASE_FILE)}.wal'`,
      `COPY (SELECT 1) TO '${join(dir, 'lake', DATABASE_FILE)}'`,
      'DETACH lake',
      'CHECKPOINT',
    ];
    for (const query of statements) {
      const failure = await client.sql({ query }).catch((err: unknown) => err);
      expect({ query, failure }).toMatchObject({ query, failure: { status: 400, code: 'sql_error' } });
    }
    expect(existsSync(`${out}.csv`)).toBe(false);
    expect(existsSync(`${out}.db`)).toBe(false);
  });
});

describe('lake server: config changes', () => {
  it('drops a removed dataset and keeps the unchanged ones ready without reloading them', async () => {
    const before = await client.status();
    const next = config(join(dir, 'data'));
    next.generation = 2;
    next.config.datasets = (next.config.datasets ?? []).filter((dataset) => dataset.name !== 'events');
    await client.applyConfig(next);
    const status = await waitForStatus(client, (s) => !s.loading && s.generation === 2);
    expect(status.datasets.events).toBeUndefined();
    expect(status.datasets.orders?.loadedAt).toBe(before.datasets.orders?.loadedAt);
    await expect(client.sql({ query: 'SELECT * FROM events' })).rejects.toMatchObject({ code: 'sql_error' });
  });

  it('lets a dataset take the name of a view the same config removes', async () => {
    const next = config(join(dir, 'data'));
    next.generation = 3;
    next.config.views = (next.config.views ?? []).filter((view) => view.name !== 'top_spender');
    next.config.datasets = [
      ...(next.config.datasets ?? []),
      { name: 'top_spender', from: `file://${join(dir, 'data')}/customers.csv` },
    ];
    await client.applyConfig(next);
    const status = await waitForStatus(client, (s) => !s.loading && s.generation === 3);
    expect(status.datasets.top_spender).toMatchObject({ status: 'ready', rowCount: 3 });
    expect(status.views.top_spender).toBeUndefined();
  });

  it('refuses a malformed config with 400 and keeps serving', async () => {
    const response = await fetch(`${lake.url}/v1/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ generation: 'three', config: {} }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'bad_request' } });
    expect((await client.status()).generation).toBe(3);
  });
});

describe('lake server: authentication', () => {
  it('answers 401 to a wrong token, on /healthz too', async () => {
    const wrong = new LakeClient({ endpoint: lake.url, token: 'x'.repeat(40) });
    await expect(wrong.status()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const health = await fetch(`${lake.url}/healthz`);
    expect(health.status).toBe(401);
    expect(health.headers.get('www-authenticate')).toBe('Bearer realm="agentry-lake"');
    const ok = await fetch(`${lake.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await ok.json()).toEqual({ status: 'ok' });
  });
});

describe('lake server: query timeout', () => {
  it('interrupts a query that runs past AGENTRY_LAKE_QUERY_TIMEOUT with 504 timeout, and keeps serving', async () => {
    const slow = await startLakeServer(
      lakeConfig({
        AGENTRY_LAKE_DATA_DIR: join(dir, 'slow'),
        AGENTRY_LAKE_QUERY_TIMEOUT: '300ms',
        AGENTRY_LAKE_THREADS: '1',
      }),
      { logger: createLogger({ level: 'silent' }) },
    );
    try {
      const slowClient = new LakeClient({ endpoint: slow.url, token: TOKEN });
      await slowClient.applyConfig({ generation: 1, config: { name: 'empty' } });
      const failure = await slowClient
        .sql({
          query: 'SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range + b.range = 7',
        })
        .catch((err: unknown) => err);
      expect(failure).toMatchObject({ status: 504, code: 'timeout' });
      expect((await slowClient.sql({ query: 'SELECT 42 AS answer' })).rows).toEqual([{ answer: 42 }]);
    } finally {
      await slow.stop();
    }
  });
});
