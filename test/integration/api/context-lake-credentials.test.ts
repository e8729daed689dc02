// Dataset credentials (docs/api.md#context-lake): literal s3_key and s3_secret values move into the lake's
// Secret; the configuration, every answer, the stored ContextLake and the logs carry only
// `${secrets:<key>}` references. Checked on a real API server over the embedded store.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONTEXT_LAKE_SECRET_NAME, ContextLakeType } from '../../../crds/context-lake/types.js';
import { SecretType, secretValue } from '../../../crds/index.js';
import type { Secret } from '../../../crds/index.js';
import { startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeError, lakeNamespace, storedLake } from './context-lake-support.js';

const ACCESS_KEY = 'AKIAEXAMPLELAKE7Q2Z';
const SECRET_KEY = 'lake-secret-value-do-not-echo-5e1b';
const ORG = 'creds';

const logLines: string[] = [];
let api: TestApi;
let key: string;

const keyedDataset = (params: Record<string, string>) => ({
  name: 'private_sales',
  from: 's3://agentry-private-bucket/sales.parquet',
  params: { s3_auth: 'key', s3_region: 'eu-west-1', ...params },
});

async function lakeSecret(): Promise<Secret | undefined> {
  return api.store.get(SecretType, lakeNamespace(ORG), CONTEXT_LAKE_SECRET_NAME);
}

beforeAll(async () => {
  api = await startTestApi({
    logDestination: {
      write(line: string) {
        logLines.push(line);
      },
    },
  });
  key = await api.key({ org: ORG, user: 'cora' });
});
afterAll(async () => {
  await api.stop();
});

describe('credentials of a dataset', () => {
  it('moves literal values into the Secret and shows only references', async () => {
    const added = await lake(
      api,
      key,
      'POST',
      '/datasets',
      keyedDataset({ s3_key: ACCESS_KEY, s3_secret: SECRET_KEY }),
    );
    expect(added.status).toBe(201);
    expect(added.json).toEqual({
      ok: true,
      dataset: keyedDataset({
        s3_key: '${secrets:private_sales.s3_key}',
        s3_secret: '${secrets:private_sales.s3_secret}',
      }),
    });

    const secret = await lakeSecret();
    expect(secret === undefined ? undefined : secretValue(secret, 'private_sales.s3_key')).toBe(ACCESS_KEY);
    expect(secret === undefined ? undefined : secretValue(secret, 'private_sales.s3_secret')).toBe(
      SECRET_KEY,
    );
    const lakeObject = await storedLake(api, ORG);
    expect(secret?.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: ContextLakeType.kind,
        name: lakeObject?.metadata.name,
        uid: lakeObject?.metadata.uid,
      }),
    ]);
  });

  it('never shows a value in GET /config, GET /datasets, the stored ContextLake or the logs', async () => {
    const texts = [
      (await lake(api, key, 'GET', '/config')).text,
      (await lake(api, key, 'GET', '/datasets')).text,
      JSON.stringify(await storedLake(api, ORG)),
      logLines.join('\n'),
    ];
    expect(logLines.length).toBeGreaterThan(0);
    for (const text of texts) {
      expect(text).not.toContain(ACCESS_KEY);
      expect(text).not.toContain(SECRET_KEY);
    }
    expect(texts[0]).toContain('${secrets:private_sales.s3_secret}');
  });

  it('keeps the stored value when a later save sends the references back', async () => {
    const put = await lake(
      api,
      key,
      'PUT',
      '/datasets/private_sales',
      keyedDataset({
        s3_key: '${secrets:private_sales.s3_key}',
        s3_secret: '${secrets:private_sales.s3_secret}',
        s3_region: 'us-east-1',
      }),
    );
    expect(put.status).toBe(200);
    const secret = await lakeSecret();
    expect(secret === undefined ? undefined : secretValue(secret, 'private_sales.s3_secret')).toBe(
      SECRET_KEY,
    );
    expect((await storedLake(api, ORG))?.spec.config.datasets[0]?.params?.s3_region).toBe('us-east-1');
  });

  it('refuses a reference to a secret that does not exist, naming the param', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', {
        ...keyedDataset({ s3_key: ACCESS_KEY, s3_secret: '${secrets:nowhere.s3_secret}' }),
        name: 'dangling',
      }),
      400,
      'validation_error',
    );
    expect(body.errors).toEqual([
      { path: 'params.s3_secret', message: expect.stringContaining('does not exist') },
    ]);
    expect((await lakeSecret())?.data?.['dangling.s3_key']).toBeUndefined();
  });

  it('refuses a secret reference in a param that is not a credential', async () => {
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets', {
        name: 'sneaky',
        from: 's3://agentry-private-bucket/sneaky.parquet',
        params: { s3_region: '${secrets:private_sales.s3_secret}' },
      }),
      400,
      'validation_error',
    );
    expect(body.errors?.map((e) => e.path)).toContain('params.s3_region');
  });

  it('replaces the value when a literal is sent again, and drops the keys of a removed dataset', async () => {
    const rotated = 'rotated-secret-value-0c4d';
    await lake(api, key, 'PATCH', '/config', {
      updateDatasets: {
        private_sales: { params: { s3_auth: 'key', s3_key: ACCESS_KEY, s3_secret: rotated } },
      },
    });
    const secret = await lakeSecret();
    expect(secret === undefined ? undefined : secretValue(secret, 'private_sales.s3_secret')).toBe(rotated);

    expect((await lake(api, key, 'DELETE', '/datasets/private_sales')).status).toBe(200);
    expect(Object.keys((await lakeSecret())?.data ?? {})).toEqual([]);
  });
});
