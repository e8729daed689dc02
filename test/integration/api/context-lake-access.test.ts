// Who may call the context-lake API and how it refuses (docs/api.md#errors and #authentication): every error under
// /v1/context-lake, authentication included, answers `{ error, code }`; each operation needs its
// scope; the OpenAPI document describes the routes with that error shape.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { LakeErrorSchema, lake, lakeError, s3Dataset } from './context-lake-support.js';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ lakeSqlTimeoutMs: 300 });
});
afterAll(async () => {
  await api.stop();
});

describe('errors under /v1/context-lake', () => {
  it('answers a missing key with 401 missing_api_key in the data-context shape', async () => {
    await lakeError(lake(api, undefined, 'GET', '/config'), 401, 'missing_api_key');
  });

  it('answers an unknown key with 401 invalid_api_key in the data-context shape', async () => {
    await lakeError(
      lake(api, 'agk_not-a-real-key', 'POST', '/sql', { query: 'SELECT 1' }),
      401,
      'invalid_api_key',
    );
  });

  it('answers an unknown route, a wrong media type and an oversized body in the data-context shape', async () => {
    const key = await api.key({ org: 'shape', user: 'sam' });
    await lakeError(lake(api, key, 'GET', '/nothing-here'), 404, 'not_found');
    const text = await call(api, '/v1/context-lake/datasets', {
      key,
      method: 'POST',
      body: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect({ status: text.status, code: LakeErrorSchema.parse(await text.json()).code }).toEqual({
      status: 415,
      code: 'unsupported_media_type',
    });
    const huge = await call(api, '/v1/context-lake/sql', {
      key,
      method: 'POST',
      body: { query: 'x'.repeat(1_100_000) },
    });
    expect({ status: huge.status, code: LakeErrorSchema.parse(await huge.json()).code }).toEqual({
      status: 413,
      code: 'payload_too_large',
    });
  });

  it('keeps the task API shape outside the prefix', async () => {
    const res = await call(api, '/v1/tasks');
    expect(await res.json()).toEqual({ error: { code: 'missing_api_key', message: expect.any(String) } });
  });
});

describe('scopes', () => {
  it('lets a context-lake:read key read but not write, query or control the lake', async () => {
    const reader = await api.key({ org: 'scoped', user: 'rita', scopes: ['context-lake:read'] });
    expect((await lake(api, reader, 'GET', '/config')).status).toBe(200);
    expect((await lake(api, reader, 'GET', '/status')).status).toBe(200);
    await lakeError(lake(api, reader, 'POST', '/datasets', s3Dataset('nope')), 403, 'insufficient_scopes');
    await lakeError(lake(api, reader, 'PATCH', '/config', {}), 403, 'insufficient_scopes');
    await lakeError(lake(api, reader, 'POST', '/sql', { query: 'SELECT 1' }), 403, 'insufficient_scopes');
    await lakeError(lake(api, reader, 'POST', '/start'), 403, 'insufficient_scopes');
  });

  it('lets a context-lake:write key edit the configuration but not start the lake', async () => {
    const writer = await api.key({ org: 'scoped', user: 'walt', scopes: ['context-lake:write'] });
    expect((await lake(api, writer, 'POST', '/views', { name: 'v1', sql: 'SELECT 1' })).status).toBe(201);
    await lakeError(lake(api, writer, 'GET', '/views'), 403, 'insufficient_scopes');
    await lakeError(lake(api, writer, 'POST', '/stop'), 403, 'insufficient_scopes');
    await lakeError(lake(api, writer, 'POST', '/sql', { query: 'SELECT 1' }), 403, 'insufficient_scopes');
  });

  it('lets context-lake:admin start, stop and redeploy, and context-lake:sql query', async () => {
    const admin = await api.key({ org: 'scoped', user: 'ada', scopes: ['context-lake:admin'] });
    expect((await lake(api, admin, 'POST', '/start')).status).toBe(202);
    expect((await lake(api, admin, 'POST', '/redeploy')).status).toBe(202);
    expect((await lake(api, admin, 'POST', '/stop')).status).toBe(202);
    const querier = await api.key({ org: 'scoped', user: 'quinn', scopes: ['context-lake:sql'] });
    // Past the scope check: the lake never becomes ready here, so the short bound ends the call.
    await lakeError(lake(api, querier, 'POST', '/sql', { query: 'SELECT 1' }), 504, 'timeout');
    await lakeError(lake(api, querier, 'GET', '/config'), 403, 'insufficient_scopes');
  });

  it('lets a key with * do everything', async () => {
    const all = await api.key({ org: 'scoped', user: 'root', scopes: ['*'] });
    expect((await lake(api, all, 'GET', '/views')).status).toBe(200);
    expect((await lake(api, all, 'POST', '/datasets', s3Dataset('star'))).status).toBe(201);
    expect((await lake(api, all, 'POST', '/start')).status).toBe(202);
  });
});

describe('OpenAPI', () => {
  it('lists every context-lake operation with its scope and the data-context error shape', async () => {
    const doc = (await (await call(api, '/v1/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<string, { 'x-required-scope': string; responses: Record<string, unknown> }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    const lakePaths = Object.entries(doc.paths).filter(([path]) => path.startsWith('/v1/context-lake/'));
    const operations = lakePaths.flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'get /v1/context-lake/config',
        'patch /v1/context-lake/config',
        'get /v1/context-lake/datasets',
        'post /v1/context-lake/datasets',
        'put /v1/context-lake/datasets/{name}',
        'delete /v1/context-lake/datasets/{name}',
        'post /v1/context-lake/datasets/{name}/refresh',
        'get /v1/context-lake/views',
        'post /v1/context-lake/views',
        'put /v1/context-lake/views/{name}',
        'delete /v1/context-lake/views/{name}',
        'post /v1/context-lake/sql',
        'get /v1/context-lake/status',
        'post /v1/context-lake/start',
        'post /v1/context-lake/stop',
        'post /v1/context-lake/redeploy',
      ].sort(),
    );
    expect(doc.paths['/v1/context-lake/sql']?.post?.['x-required-scope']).toBe('context-lake:sql');
    expect(doc.paths['/v1/context-lake/datasets/{name}/refresh']?.post?.['x-required-scope']).toBe(
      'context-lake:write',
    );
    expect(doc.paths['/v1/context-lake/config']?.get?.responses.default).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/LakeError' } } },
    });
    const errorSchema = JSON.stringify(doc.components.schemas.LakeError);
    expect(errorSchema).toContain('"errors"');
    expect(errorSchema).not.toContain('"details"');
  });
});
