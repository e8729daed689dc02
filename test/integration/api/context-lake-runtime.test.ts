// The lake's VM and status as the API shows them (docs/api.md#context-lake): GET /status
// derived from the ContextLake status the operator writes (played here by the test), the intents
// written by /start, /stop and /redeploy, and POST /sql's wake-up and time limit.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeError, s3Dataset, storedLake, writeLakeStatus } from './context-lake-support.js';

let api: TestApi;
const now = new Date('2026-03-04T05:06:07.089Z');
const logLines: string[] = [];

beforeAll(async () => {
  api = await startTestApi({
    lakeSqlTimeoutMs: 500,
    now: () => now,
    logDestination: {
      write(line: string) {
        logLines.push(line);
      },
    },
  });
});
afterAll(async () => {
  await api.stop();
});

describe('GET /status', () => {
  it('answers not_provisioned and no datasets before the organization has a lake', async () => {
    const key = await api.key({ org: 'st-none', user: 'nia' });
    expect((await lake(api, key, 'GET', '/status')).json).toEqual({
      vmStatus: 'not_provisioned',
      datasets: {},
    });
  });

  it('derives each dataset from the observed status, pending when not yet observed', async () => {
    const key = await api.key({ org: 'st-run', user: 'rob' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('seen', { notifications: false }));
    await lake(api, key, 'POST', '/datasets', { name: 'web', from: 'https://example.com/data.csv' });
    await lake(api, key, 'POST', '/start');
    await writeLakeStatus(api, 'st-run', () => ({
      vmStatus: 'running',
      datasets: {
        seen: {
          ok: true,
          status: 'ready',
          connectorId: 's3',
          notifications: false,
          s3EventCount: 3,
          s3LastEventAt: '2026-03-04T05:00:00.000Z',
          s3LastRefreshAt: '2026-03-04T05:00:01.000Z',
        },
        gone: { ok: true, status: 'ready', connectorId: 's3', notifications: false },
      },
    }));
    expect((await lake(api, key, 'GET', '/status')).json).toEqual({
      vmStatus: 'running',
      datasets: {
        seen: {
          ok: true,
          status: 'ready',
          connectorId: 's3',
          notifications: false,
          s3EventCount: 3,
          s3LastEventAt: '2026-03-04T05:00:00.000Z',
          s3LastRefreshAt: '2026-03-04T05:00:01.000Z',
        },
        web: { ok: false, status: 'pending', connectorId: 'https', notifications: false },
      },
    });
  });

  it('shows every dataset as unknown while the lake is paused, keeping the S3 counters', async () => {
    const key = await api.key({ org: 'st-paused', user: 'pat' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('cold'));
    await writeLakeStatus(api, 'st-paused', () => ({
      vmStatus: 'paused',
      datasets: {
        cold: { ok: true, status: 'ready', connectorId: 's3', notifications: false, s3EventCount: 7 },
      },
    }));
    expect((await lake(api, key, 'GET', '/status')).json).toEqual({
      vmStatus: 'paused',
      datasets: {
        cold: { ok: false, status: 'unknown', connectorId: 's3', notifications: false, s3EventCount: 7 },
      },
    });
  });

  it('passes on a dataset error message', async () => {
    const key = await api.key({ org: 'st-error', user: 'eve' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('broken'));
    await lake(api, key, 'POST', '/start');
    await writeLakeStatus(api, 'st-error', () => ({
      vmStatus: 'running',
      datasets: {
        broken: { ok: false, status: 'error', connectorId: 's3', notifications: false, error: 'NoSuchKey' },
      },
    }));
    const answer = (await lake(api, key, 'GET', '/status')).json as { datasets: Record<string, unknown> };
    expect(answer.datasets.broken).toEqual({
      ok: false,
      status: 'error',
      connectorId: 's3',
      notifications: false,
      error: 'NoSuchKey',
    });
  });
});

describe('start, stop and redeploy', () => {
  it('creates the lake on start with operatingMode Running and answers 202 provisioning', async () => {
    const key = await api.key({ org: 'vm-start', user: 'sia' });
    const started = await lake(api, key, 'POST', '/start');
    expect({ status: started.status, json: started.json }).toEqual({
      status: 202,
      json: { ok: true, vmStatus: 'provisioning', requestedMode: 'running' },
    });
    const stored = await storedLake(api, 'vm-start');
    expect(stored?.spec.operatingMode).toBe('Running');
    expect(stored?.spec.config).toEqual({
      version: 'v1',
      kind: 'Spicepod',
      name: 'vm-start',
      datasets: [],
      views: [],
    });
  });

  it('sets operatingMode Hibernated on stop and keeps the configuration', async () => {
    const key = await api.key({ org: 'vm-stop', user: 'sol' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('kept'));
    await lake(api, key, 'POST', '/start');
    await writeLakeStatus(api, 'vm-stop', () => ({ vmStatus: 'running' }));
    const stopped = await lake(api, key, 'POST', '/stop');
    expect(stopped.status).toBe(202);
    // Regression: the answer must not claim a state the lake is not in; it still runs until stopped.
    expect(stopped.json).toEqual({ ok: true, vmStatus: 'running', requestedMode: 'paused' });
    const stored = await storedLake(api, 'vm-stop');
    expect(stored?.spec.operatingMode).toBe('Hibernated');
    expect(stored?.spec.config.datasets.map((d) => d.name)).toEqual(['kept']);
  });

  it('stamps restartedAt on redeploy', async () => {
    const key = await api.key({ org: 'vm-redeploy', user: 'rae' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('again'));
    const before = await storedLake(api, 'vm-redeploy');
    expect((await lake(api, key, 'POST', '/redeploy')).status).toBe(202);
    const after = await storedLake(api, 'vm-redeploy');
    expect(after?.spec.restartedAt).toBe(now.toISOString());
    expect(after?.metadata.generation).toBeGreaterThan(before?.metadata.generation ?? 0);
  });

  it('answers stop and redeploy without creating a lake that does not exist', async () => {
    const key = await api.key({ org: 'vm-none', user: 'ned' });
    expect((await lake(api, key, 'POST', '/stop')).json).toEqual({
      ok: true,
      vmStatus: 'not_provisioned',
      requestedMode: 'paused',
    });
    expect((await lake(api, key, 'POST', '/redeploy')).json).toEqual({
      ok: true,
      vmStatus: 'not_provisioned',
      requestedMode: 'paused',
    });
    expect(await storedLake(api, 'vm-none')).toBeUndefined();
  });
});

describe('POST /sql', () => {
  it('starts a hibernated lake and answers 504 timeout when it does not become ready in time', async () => {
    const key = await api.key({ org: 'sql-cold', user: 'cal' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('cold'));
    expect((await storedLake(api, 'sql-cold'))?.spec.operatingMode).toBe('Hibernated');
    await lakeError(lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }), 504, 'timeout');
    expect((await storedLake(api, 'sql-cold'))?.spec.operatingMode).toBe('Running');
  });

  it('logs a call that ran out of time, with where it was waiting', async () => {
    const key = await api.key({ org: 'sql-log', user: 'lou' });
    await lakeError(lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }), 504, 'timeout');
    const line = logLines.find(
      (text) => text.includes('a context lake request ran out of time') && text.includes('sql-log'),
    );
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      namespace: 'agentry-org-sql-log',
      phase: 'waiting for the lake',
      what: 'query',
    });
  });

  it('provisions a missing lake before waiting', async () => {
    const key = await api.key({ org: 'sql-none', user: 'nan' });
    await lakeError(lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }), 504, 'timeout');
    expect((await storedLake(api, 'sql-none'))?.spec.operatingMode).toBe('Running');
  });

  it('fails at once with the reason when the lake is in error, instead of waiting for the time-out', async () => {
    const key = await api.key({ org: 'sql-broken', user: 'bea' });
    await lake(api, key, 'POST', '/start');
    await writeLakeStatus(api, 'sql-broken', (current) => ({
      observedGeneration: current.metadata.generation,
      vmStatus: 'error',
      conditions: [
        {
          type: 'Provisioned',
          status: 'False',
          observedGeneration: current.metadata.generation,
          lastTransitionTime: new Date().toISOString(),
          reason: 'ProvisionFailed',
          message: 'ErrImagePull: image ghcr.io/acme/lake:9 not found',
        },
      ],
    }));
    // A wait would end in 504 timeout; the lake's reason comes back instead.
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }),
      503,
      'service_unavailable',
    );
    expect(body.error).toContain('ErrImagePull: image ghcr.io/acme/lake:9 not found');
  });

  it('refuses a body without a query or with a bad one, whatever else it carries', async () => {
    const key = await api.key({ org: 'sql-bad', user: 'bo' });
    await lakeError(lake(api, key, 'POST', '/sql', {}), 400, 'validation_error');
    await lakeError(lake(api, key, 'POST', '/sql', { query: 7, rowLimit: 5 }), 400, 'validation_error');
    await lakeError(lake(api, key, 'POST', '/sql', { query: '' }), 400, 'validation_error');
    expect(await storedLake(api, 'sql-bad')).toBeUndefined();
  });

  it('counts calls in the SQL duration histogram', async () => {
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(/agentry_lake_sql_duration_seconds_count\{outcome="timeout"\} [1-9]/);
  });
});

describe('POST /datasets/:name/refresh', () => {
  it('answers 404 not_found for a dataset the configuration lacks, and wakes nothing', async () => {
    const key = await api.key({ org: 'rf-none', user: 'ron' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('known'));
    const body = await lakeError(lake(api, key, 'POST', '/datasets/unknown/refresh', {}), 404, 'not_found');
    expect(body.error).toContain('unknown');
    expect((await storedLake(api, 'rf-none'))?.spec.operatingMode).toBe('Hibernated');
  });

  it('refuses a mode other than auto or full with 400 validation_error naming the field', async () => {
    const key = await api.key({ org: 'rf-bad', user: 'rb' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('known'));
    const body = await lakeError(
      lake(api, key, 'POST', '/datasets/known/refresh', { mode: 'sometimes' }),
      400,
      'validation_error',
    );
    expect(body.errors?.map((error) => error.path)).toEqual(['mode']);
    expect((await storedLake(api, 'rf-bad'))?.spec.operatingMode).toBe('Hibernated');
  });

  it('starts a hibernated lake to refresh it, and answers 504 timeout when it does not become ready in time', async () => {
    const key = await api.key({ org: 'rf-cold', user: 'rc' });
    await lake(api, key, 'POST', '/datasets', s3Dataset('cold'));
    await lakeError(lake(api, key, 'POST', '/datasets/cold/refresh', { mode: 'full' }), 504, 'timeout');
    expect((await storedLake(api, 'rf-cold'))?.spec.operatingMode).toBe('Running');
  });

  it('needs the context-lake:write scope', async () => {
    const key = await api.key({
      org: 'rf-scope',
      user: 'rs',
      scopes: ['context-lake:read', 'context-lake:sql'],
    });
    await lakeError(lake(api, key, 'POST', '/datasets/any/refresh', {}), 403, 'insufficient_scopes');
  });
});
