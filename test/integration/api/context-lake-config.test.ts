// The context lake's configuration API (docs/api.md#context-lake) on a real API server over
// the embedded store: GET and PATCH /config, datasets and views, all-or-nothing validation, and
// the plan and isolation rules of docs/api.md#authentication.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { z } from 'zod';
import { SpicepodSchema } from '../../../crds/context-lake/types.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeError, s3Dataset, storedLake } from './context-lake-support.js';

const ConfigAnswerSchema = z.strictObject({ yaml: z.string(), config: SpicepodSchema });

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key({ org: 'lakeco', user: 'lena' });
});
afterAll(async () => {
  await api.stop();
});

async function config(onKey = key) {
  const answer = await lake(api, onKey, 'GET', '/config');
  expect(answer.status).toBe(200);
  return ConfigAnswerSchema.parse(answer.json);
}

describe('GET /config', () => {
  it('answers the empty default, named after the organization, before any write', async () => {
    const fresh = await api.key({ org: 'lake-fresh', user: 'fay' });
    const answer = await config(fresh);
    expect(answer.config).toEqual({
      version: 'v1',
      kind: 'Spicepod',
      name: 'lake-fresh',
      datasets: [],
      views: [],
    });
    expect(parse(answer.yaml)).toEqual(answer.config);
    expect(await storedLake(api, 'lake-fresh')).toBeUndefined();
  });

  it('prints the YAML in the spicepod order: version, kind, name, datasets, views', async () => {
    const org = await api.key({ org: 'lake-yaml', user: 'yan' });
    expect((await lake(api, org, 'POST', '/datasets', s3Dataset('orders'))).status).toBe(201);
    const { yaml } = await config(org);
    const keys = yaml
      .split('\n')
      .filter((line) => /^[a-z]+:/.test(line))
      .map((line) => line.split(':')[0]);
    expect(keys).toEqual(['version', 'kind', 'name', 'datasets', 'views']);
    expect(yaml).toContain('from: s3://agentry-test-bucket/orders.parquet');
  });
});

describe('datasets', () => {
  it('adds a dataset (201), lists it and stores it in the ContextLake, hibernated', async () => {
    const added = await lake(
      api,
      key,
      'POST',
      '/datasets',
      s3Dataset('sales', { params: { s3_region: 'eu-west-1' } }),
    );
    expect(added.status).toBe(201);
    expect(added.json).toEqual({
      ok: true,
      dataset: s3Dataset('sales', { params: { s3_region: 'eu-west-1' } }),
    });
    const listed = await lake(api, key, 'GET', '/datasets');
    expect(listed.json).toEqual({ datasets: [s3Dataset('sales', { params: { s3_region: 'eu-west-1' } })] });
    const stored = await storedLake(api, 'lakeco');
    expect(stored?.spec.config.datasets.map((d) => d.name)).toEqual(['sales']);
    expect(stored?.spec.operatingMode).toBe('Hibernated');
  });

  it('takes scalar params and stores them as strings', async () => {
    const added = await lake(api, key, 'POST', '/datasets', {
      name: 'hive',
      from: 's3://agentry-test-bucket/hive/',
      params: { file_format: 'parquet', hive_partitioning_enabled: true },
    });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ dataset: { params: { hive_partitioning_enabled: 'true' } } });
  });

  it('replaces a dataset with PUT (params whole) and removes it with DELETE', async () => {
    await lake(api, key, 'POST', '/datasets', s3Dataset('swap', { params: { s3_region: 'eu-west-1' } }));
    const put = await lake(
      api,
      key,
      'PUT',
      '/datasets/swap',
      s3Dataset('swap', { params: { file_format: 'parquet' } }),
    );
    expect(put.json).toEqual({
      ok: true,
      dataset: s3Dataset('swap', { params: { file_format: 'parquet' } }),
    });
    expect((await lake(api, key, 'DELETE', '/datasets/swap')).json).toEqual({ ok: true });
    expect((await config()).config.datasets.some((d) => d.name === 'swap')).toBe(false);
  });

  it('answers 409 conflict for a name in use, by a dataset or by a view', async () => {
    await lake(api, key, 'POST', '/datasets', s3Dataset('taken'));
    await lake(api, key, 'POST', '/views', { name: 'taken_view', sql: 'SELECT 1' });
    await lakeError(lake(api, key, 'POST', '/datasets', s3Dataset('taken')), 409, 'conflict');
    await lakeError(lake(api, key, 'POST', '/datasets', s3Dataset('taken_view')), 409, 'conflict');
    await lakeError(lake(api, key, 'POST', '/views', { name: 'taken', sql: 'SELECT 2' }), 409, 'conflict');
  });

  it('answers 404 not_found for PUT and DELETE of a dataset or view that does not exist', async () => {
    await lakeError(lake(api, key, 'PUT', '/datasets/nope', s3Dataset('nope')), 404, 'not_found');
    await lakeError(lake(api, key, 'DELETE', '/datasets/nope'), 404, 'not_found');
    await lakeError(
      lake(api, key, 'PUT', '/views/nope', { name: 'nope', sql: 'SELECT 1' }),
      404,
      'not_found',
    );
    await lakeError(lake(api, key, 'DELETE', '/views/nope'), 404, 'not_found');
  });

  it('refuses a PUT whose body names another dataset than the path', async () => {
    await lake(api, key, 'POST', '/datasets', s3Dataset('left'));
    const body = await lakeError(
      lake(api, key, 'PUT', '/datasets/left', s3Dataset('right')),
      400,
      'validation_error',
    );
    expect(body.errors?.[0]?.path).toBe('name');
  });

  it('names an unknown param in the validation error', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', s3Dataset('odd', { params: { region: 'eu-west-1' } })),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([
      { path: 'params.region', message: expect.stringContaining('unknown param region') },
    ]);
  });

  it('requires params.s3_key when s3_auth is key', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', s3Dataset('keyed', { params: { s3_auth: 'key', s3_secret: 'x' } })),
      400,
      'validation_error',
    );
    expect(body.errors).toContainEqual({
      path: 'params.s3_key',
      message: 's3_key is required when s3_auth is key',
    });
  });

  it('refuses an invalid name with the offending path, also beside an unknown field', async () => {
    const badName = await lakeError(
      lake(api, key, 'POST', '/datasets', s3Dataset('9lives', { refresh: 'hourly' })),
      400,
      'validation_error',
    );
    expect(badName.errors?.[0]?.path).toBe('name');
  });

  it('ignores an unknown dataset field, naming it in a Warning header, but never an unknown param', async () => {
    const res = await call(api, '/v1/context-lake/datasets', {
      key,
      method: 'POST',
      body: s3Dataset('extra', { refresh: 'hourly', params: { file_format: 'parquet' } }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 agentry "ignored unknown fields: refresh"');
    const dataset = (await config()).config.datasets.find((d) => d.name === 'extra');
    expect(dataset).toBeDefined();
    expect(dataset).not.toHaveProperty('refresh');
    await lakeError(
      lake(api, key, 'POST', '/datasets', s3Dataset('odd2', { refresh: 'x', params: { region: 'eu' } })),
      400,
      'validation_error',
    );
  });

  it('refuses notifications when the installation has no SQS, at path notifications', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', s3Dataset('events', { notifications: true })),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([{ path: 'notifications', message: expect.stringContaining('no SQS') }]);
  });

  it('loses no dataset when several are added at the same time', async () => {
    const names = ['par_a', 'par_b', 'par_c', 'par_d', 'par_e'];
    const answers = await Promise.all(
      names.map((name) => lake(api, key, 'POST', '/datasets', s3Dataset(name))),
    );
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 201));
    const stored = new Set((await config()).config.datasets.map((d) => d.name));
    for (const name of names) expect(stored.has(name)).toBe(true);
  });
});

describe('views', () => {
  it('adds, lists, replaces and removes a view', async () => {
    expect((await lake(api, key, 'POST', '/views', { name: 'totals', sql: 'SELECT 1 AS one' })).json).toEqual(
      {
        ok: true,
        view: { name: 'totals', sql: 'SELECT 1 AS one' },
      },
    );
    const replaced = await lake(api, key, 'PUT', '/views/totals', { name: 'totals', sql: 'SELECT 2 AS two' });
    expect(replaced.status).toBe(200);
    const listed = (await lake(api, key, 'GET', '/views')).json as { views: { name: string; sql: string }[] };
    expect(listed.views).toContainEqual({ name: 'totals', sql: 'SELECT 2 AS two' });
    expect((await lake(api, key, 'DELETE', '/views/totals')).status).toBe(200);
    expect((await config()).config.views.some((v) => v.name === 'totals')).toBe(false);
  });
});

describe('PATCH /config', () => {
  it('applies nothing when one change among valid ones is invalid, and names its path', async () => {
    const before = await config();
    const body = await lakeError(
      lake(api, key, 'PATCH', '/config', {
        addDatasets: [s3Dataset('fine_one'), { name: 'broken', from: 's3://agentry-test-bucket/raw/' }],
        addViews: [{ name: 'fine_view', sql: 'SELECT 1' }],
        removeDatasets: ['sales'],
      }),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([{ path: 'addDatasets.1.params.file_format', message: expect.any(String) }]);
    expect(await config()).toEqual(before);
  });

  it('applies removes before adds, so one PATCH can remove and re-add a name', async () => {
    await lake(api, key, 'POST', '/datasets', s3Dataset('again'));
    const patched = await lake(api, key, 'PATCH', '/config', {
      removeDatasets: ['again'],
      addDatasets: [{ name: 'again', from: 's3://agentry-test-bucket/v2/again.csv' }],
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ ok: true, notifications: {} });
    const again = (await config()).config.datasets.find((d) => d.name === 'again');
    expect(again).toEqual({ name: 'again', from: 's3://agentry-test-bucket/v2/again.csv' });
  });

  it('applies adds before updates and replaces params whole', async () => {
    const patched = await lake(api, key, 'PATCH', '/config', {
      addDatasets: [s3Dataset('tuned', { params: { s3_region: 'eu-west-1', client_timeout: '30s' } })],
      updateDatasets: { tuned: { params: { file_format: 'parquet' } } },
    });
    expect(patched.status).toBe(200);
    const tuned = (await config()).config.datasets.find((d) => d.name === 'tuned');
    expect(tuned?.params).toEqual({ file_format: 'parquet' });
  });

  it('reports removing or updating a name that does not exist at its path', async () => {
    const body = await lakeError(
      lake(api, key, 'PATCH', '/config', {
        removeDatasets: ['ghost'],
        removeViews: ['phantom'],
        updateDatasets: { spectre: { from: 's3://agentry-test-bucket/x.csv' } },
      }),
      400,
      'validation_error',
    );
    expect(body.errors?.map((e) => e.path).sort()).toEqual([
      'removeDatasets.0',
      'removeViews.0',
      'updateDatasets.spectre',
    ]);
  });

  it('refuses a name used by both a dataset and a view in the result', async () => {
    const body = await lakeError(
      lake(api, key, 'PATCH', '/config', { addViews: [{ name: 'taken', sql: 'SELECT 1' }] }),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([{ path: 'addViews.0.name', message: expect.stringContaining('taken') }]);
  });

  it('ignores unknown fields but refuses a known one of the wrong type', async () => {
    const res = await call(api, '/v1/context-lake/config', {
      key,
      method: 'PATCH',
      body: { updateViews: {} },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('warning')).toContain('updateViews');
    await lakeError(lake(api, key, 'PATCH', '/config', { removeViews: 'v' }), 400, 'validation_error');
  });
});

describe('plans and organizations', () => {
  it('answers 403 subscription_required to an organization on the free plan', async () => {
    await api.organization('lake-free', 'free');
    const free = await api.key({ org: 'lake-free', user: 'fred' });
    await lakeError(lake(api, free, 'GET', '/config'), 403, 'subscription_required');
    await lakeError(lake(api, free, 'POST', '/datasets', s3Dataset('x')), 403, 'subscription_required');
    expect(await storedLake(api, 'lake-free')).toBeUndefined();
  });

  it("shows another organization its own empty config, never this one's lake", async () => {
    const other = await api.key({ org: 'lake-other', user: 'otto' });
    const answer = await config(other);
    expect(answer.config.datasets).toEqual([]);
    expect((await lake(api, other, 'GET', '/datasets')).json).toEqual({ datasets: [] });
    await lakeError(lake(api, other, 'DELETE', '/datasets/sales'), 404, 'not_found');
    await lakeError(lake(api, other, 'PUT', '/datasets/sales', s3Dataset('sales')), 404, 'not_found');
    expect((await config()).config.datasets.some((d) => d.name === 'sales')).toBe(true);
  });
});
