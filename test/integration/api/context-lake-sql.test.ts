// POST /v1/context-lake/sql end to end in one process: the API server proxies to a real lake
// server (DuckDB) that the test starts and configures as the operator would, and writes the
// ContextLake status (Ready for the generation, endpoint) as the operator would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLakeConfig } from '../../../lake/config.js';
import { startLakeServer } from '../../../lake/server.js';
import type { RunningLake } from '../../../lake/server.js';
import type { ContextLake } from '../../../crds/context-lake/types.js';
import { LakeClient } from '../../../platform/lake-client.js';
import { createLogger } from '../../../platform/log.js';
import { eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeError, readyCondition, storedLake, writeLakeStatus } from './context-lake-support.js';
import { freeLoopbackPort } from '../../support/free-port.js';

const ORG = 'sqlco';
let api: TestApi;
let key: string;
let dir: string;
let server: RunningLake;

/** The operator's part: the lake server gets the stored configuration and loads it. */
async function pushConfig(current: ContextLake): Promise<void> {
  const client = new LakeClient({ endpoint: server.url, token: api.installationKey.runnerToken(current) });
  await client.applyConfig({ generation: current.metadata.generation ?? 0, config: current.spec.config });
  await eventually(async () => {
    const status = await client.status();
    return !status.loading && ['people', 'events'].every((name) => status.datasets[name]?.status === 'ready');
  }, 30_000);
}

async function markReady(endpoint: string): Promise<void> {
  await writeLakeStatus(api, ORG, (current) => ({
    vmStatus: 'running',
    endpoint,
    conditions: [readyCondition(current)],
  }));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-sql-'));
  await writeFile(join(dir, 'people.csv'), 'id,name\n1,ada\n2,bob\n3,cy\n');
  await mkdir(join(dir, 'events'));
  await writeFile(join(dir, 'events', 'a.csv'), 'id,kind\n1,signup\n');
  api = await startTestApi({
    lakeConnectors: new Set(['s3', 'https', 'file']),
    lakeFileRoots: () => [dir],
    lakeSqlTimeoutMs: 60_000,
    lakeMaxResultBytes: 4 * 1024 * 1024,
  });
  key = await api.key({ org: ORG, user: 'sol' });
  expect(
    (await lake(api, key, 'POST', '/datasets', { name: 'people', from: `file://${join(dir, 'people.csv')}` }))
      .status,
  ).toBe(201);
  expect(
    (await lake(api, key, 'POST', '/views', { name: 'names', sql: 'SELECT name FROM people' })).status,
  ).toBe(201);
  expect(
    (
      await lake(api, key, 'POST', '/datasets', {
        name: 'events',
        from: `file://${join(dir, 'events')}/`,
        params: { file_format: 'csv' },
      })
    ).status,
  ).toBe(201);
  expect((await lake(api, key, 'POST', '/start')).status).toBe(202);
  const current = await storedLake(api, ORG);
  if (current === undefined) throw new Error('no lake stored');
  server = await startLakeServer(
    loadLakeConfig({
      AGENTRY_LAKE_TOKEN: api.installationKey.runnerToken(current),
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake-data'),
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
      AGENTRY_LAKE_THREADS: '1',
      AGENTRY_LAKE_CONNECTORS: 'file',
      AGENTRY_LAKE_FILE_ROOTS: dir,
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
  await pushConfig(current);
});
afterAll(async () => {
  await server.stop();
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('POST /sql against a real lake server', () => {
  it('waits for the lake to become Ready for its generation, then answers the rows', async () => {
    const pending = lake(api, key, 'POST', '/sql', { query: 'SELECT id, name FROM people ORDER BY id' });
    // The answer cannot come before the lake is Ready: nothing tells the API its address yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await markReady(server.url);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      rows: [
        { id: 1, name: 'ada' },
        { id: 2, name: 'bob' },
        { id: 3, name: 'cy' },
      ],
      columns: [
        { name: 'id', type: expect.any(String) },
        { name: 'name', type: 'VARCHAR' },
      ],
      rowCount: 3,
      truncated: false,
      elapsedMs: expect.any(Number),
      dataAsOf: { people: expect.any(String) },
    });
    expect((answer.json as { elapsedMs: number }).elapsedMs).toBeGreaterThanOrEqual(300);
  });

  it('answers dataAsOf for each dataset the query read, through views too', async () => {
    const answer = await lake(api, key, 'POST', '/sql', { query: 'SELECT count(*) AS n FROM names' });
    expect(answer.json).toMatchObject({ dataAsOf: { people: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
  });

  it('refreshes a dataset on request: 202 with the datasets the lake accepted', async () => {
    const answer = await lake(api, key, 'POST', '/datasets/people/refresh', { mode: 'full' });
    expect({ status: answer.status, json: answer.json }).toEqual({
      status: 202,
      json: { ok: true, accepted: ['people'], mode: 'full' },
    });
  });

  it('answers with an object just written when the query waits for it, no refresh asked', async () => {
    await writeFile(join(dir, 'events', 'b.csv'), 'id,kind\n2,upgrade\n');
    const answer = await lake(api, key, 'POST', '/sql', {
      query: 'SELECT kind FROM events ORDER BY id',
      waitFor: [{ key: 'b.csv' }],
      waitTimeoutMs: 20_000,
    });
    expect(answer.json).toMatchObject({ rows: [{ kind: 'signup' }, { kind: 'upgrade' }] });
  });

  it('answers 504 not_applied naming an object that does not come within the wait', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', {
        query: 'SELECT count(*) FROM events',
        waitFor: [{ key: 'never.csv' }],
        waitTimeoutMs: 300,
      }),
      504,
      'not_applied',
    );
    expect(body.error).toContain('never.csv');
  });

  it('queries views', async () => {
    const answer = await lake(api, key, 'POST', '/sql', {
      query: 'SELECT count(*)::INTEGER AS n FROM names',
    });
    expect(answer.json).toMatchObject({ rows: [{ n: 3 }], rowCount: 1 });
  });

  it("answers 400 sql_error with the engine's message for a bad query", async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', { query: 'SELECT nope FROM people' }),
      400,
      'sql_error',
    );
    expect(body.error).toMatch(/nope/);
  });

  it('answers 503 service_unavailable when the lake stays unreachable', async () => {
    // A port nothing listens on: bound, then released.
    await markReady(`http://127.0.0.1:${await freeLoopbackPort()}`);
    await lakeError(lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }), 503, 'service_unavailable');
    await markReady(server.url);
  });
});

describe('POST /sql: bounds', () => {
  it('answers 413 payload_too_large naming the limit for rows of 1 MB past it, never 503', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', { query: "SELECT repeat('x', 1000000) AS blob FROM range(20)" }),
      413,
      'payload_too_large',
    );
    expect(body.error).toContain('4 MiB (AGENTRY_LAKE_MAX_RESULT_BYTES)');
  });

  it('ends a call waiting for a cold start with 409 conflict when the lake is stopped meanwhile', async () => {
    const other = await api.key({ org: 'sqlstop', user: 'sol' });
    const pending = lake(api, other, 'POST', '/sql', { query: 'SELECT 1' });
    await eventually(
      async () => (await storedLake(api, 'sqlstop'))?.spec.operatingMode === 'Running',
      10_000,
    );
    expect((await lake(api, other, 'POST', '/stop')).status).toBe(202);
    // The API's bound is 60 s here: a 504 would mean the call waited it out.
    const body = await lakeError(pending, 409, 'conflict');
    expect(body.error).toContain('stopped while the request waited');
  });

  it('answers engine errors without the server’s paths', async () => {
    const staging = join(dir, 'lake-data', 'staging', 'x.parquet');
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', { query: `SELECT * FROM read_parquet('${staging}')` }),
      400,
      'sql_error',
    );
    expect(body.error).not.toContain(dir);
    expect(body.error).toContain('<path>');
  });
});

describe('file:// datasets: the file roots', () => {
  it('refuses a file outside the roots with 400 naming the rule, and stores nothing', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', {
        name: 'passwd',
        from: 'file:///etc/passwd',
        params: { file_format: 'csv' },
      }),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([
      { path: 'from', message: expect.stringContaining('may read only below the file roots') },
    ]);
    expect(body.error).not.toContain(dir);
    expect((await storedLake(api, ORG))?.spec.config.datasets.map((d) => d.name)).not.toContain('passwd');
  });

  it('refuses a symbolic link below a root that leads out of it', async () => {
    await symlink('/etc/passwd', join(dir, 'passwd.csv'));
    await lakeError(
      lake(api, key, 'POST', '/datasets', { name: 'passwd', from: `file://${join(dir, 'passwd.csv')}` }),
      400,
      'validation_error',
    );
  });
});
