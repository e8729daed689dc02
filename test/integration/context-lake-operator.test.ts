// The ContextLake reconciler end to end on the embedded default: the embedded store, the operator
// with the process runtime, and the real `agentry lake` from this repository's sources loading
// files written by DuckDB in the test. Nothing is faked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONTEXT_LAKE_NAME,
  CONTEXT_LAKE_SECRET_NAME,
  ContextLakeSpecSchema,
  ContextLakeType,
  EventType,
  HIBERNATED_BY_ANNOTATION,
  SecretType,
  secretData,
} from '../../crds/index.js';
import type { ContextLake, ContextLakeSpec, Dataset } from '../../crds/index.js';
import { readRunnerRecord, workloadPaths } from '../../operator/runtimes/process/workspace.js';
import { LAKE_PROGRAM } from '../../operator/runtimes/types.js';
import { LakeClient } from '../../platform/lake-client.js';
import { organizationFileRoot } from '../../platform/lake-config/file-roots.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';

const NAMESPACE = 'org-lake';
const WAIT_MS = 90_000;
/** Values of the lake's credentials Secret: they must appear in no resource and no event. */
const ACCESS_KEY = 'AKIAOPERATORTESTKEY7';
const SECRET_KEY = 'operator-test-secret-9f8e7d6c5b4a';

let stack: EmbeddedStack;
let store: ResourceStore;
let dataDir: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({
    prefix: 'agentry-lake-operator-',
    contextLakes: { busyPollMs: 300, runningPollMs: 1_000 },
  });
  store = stack.api.store;
  // The confined lake servers read their file:// datasets here and nowhere else of the data directory.
  dataDir = organizationFileRoot(stack.dir, NAMESPACE);
  await mkdir(dataDir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (SELECT i AS id, i * 5 AS amount FROM range(10) t(i))
      TO '${dataDir}/orders.parquet' (FORMAT parquet)`);
    await connection.run(`COPY (SELECT * FROM (VALUES (1, 'Ada'), (2, 'Grace')) c(id, name))
      TO '${dataDir}/customers.csv' (HEADER, DELIMITER ',')`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

const orders = (): Dataset => ({ name: 'orders', from: `file://${dataDir}/orders.parquet` });
const customers = (): Dataset => ({ name: 'customers', from: `file://${dataDir}/customers.csv` });

const lakeNow = async (): Promise<ContextLake> => {
  const lake = await store.get(ContextLakeType, NAMESPACE, CONTEXT_LAKE_NAME);
  if (lake === undefined) throw new Error('the ContextLake is gone');
  return lake;
};

/** Read-modify-write of the spec, retried when the operator wrote in between (as the API server does). */
async function editSpec(change: (spec: ContextLakeSpec) => ContextLakeSpec): Promise<ContextLake> {
  for (;;) {
    const lake = await lakeNow();
    try {
      return await store.replace(ContextLakeType, { ...lake, spec: change(lake.spec) });
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
    }
  }
}

async function waitFor(what: string, check: (lake: ContextLake) => boolean): Promise<ContextLake> {
  const deadline = Date.now() + WAIT_MS;
  let last: ContextLake | undefined;
  while (Date.now() < deadline) {
    last = await lakeNow();
    if (check(last)) return last;
    await sleep(200);
  }
  throw new Error(`timed out waiting until ${what}; status: ${JSON.stringify(last?.status)}`);
}

const readyFor = (lake: ContextLake): boolean =>
  lake.status?.conditions?.some(
    (c) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration === lake.metadata.generation,
  ) === true;

async function lakeClient(): Promise<LakeClient> {
  const lake = await lakeNow();
  const endpoint = lake.status?.endpoint;
  if (endpoint === undefined) throw new Error('the lake has no endpoint');
  return new LakeClient({ endpoint, token: stack.api.installationKey.runnerToken(lake) });
}

async function lakePid(): Promise<number | undefined> {
  const paths = workloadPaths(stack.dir, LAKE_PROGRAM, NAMESPACE, CONTEXT_LAKE_NAME);
  return (await readRunnerRecord(paths.record))?.pid;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const eventReasons = async (): Promise<string[]> =>
  (await store.list(EventType, { namespace: NAMESPACE })).items.map((event) => event.reason ?? '');

/** The reasons of the lake's events once they include `wanted` (events are recorded after the status write). */
async function eventsIncluding(...wanted: string[]): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  let reasons = await eventReasons();
  while (!wanted.every((reason) => reasons.includes(reason)) && Date.now() < deadline) {
    await sleep(100);
    reasons = await eventReasons();
  }
  return reasons;
}

describe('the ContextLake reconciler with the process runtime and the real lake server', () => {
  it('runs a lake until Ready: vmStatus running, its file dataset ready, a LakeStarted event', async () => {
    await store.create(ContextLakeType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'ContextLake',
      metadata: { name: CONTEXT_LAKE_NAME, namespace: NAMESPACE },
      spec: ContextLakeSpecSchema.parse({
        operatingMode: 'Running',
        runtime: 'process',
        idleTimeout: '0s',
        config: {
          name: 'sales',
          datasets: [orders()],
          views: [{ name: 'big_orders', sql: 'SELECT * FROM orders WHERE amount >= 25' }],
        },
      }),
    });
    const lake = await waitFor('the lake is ready', readyFor);
    expect(lake.status).toMatchObject({
      vmStatus: 'running',
      observedGeneration: lake.metadata.generation,
      datasets: { orders: { ok: true, status: 'ready', connectorId: 'file', notifications: false } },
    });
    expect(lake.status?.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await eventsIncluding('LakeStarted', 'ConfigApplied')).toEqual(
      expect.arrayContaining(['LakeStarted', 'ConfigApplied']),
    );
  }, 120_000);

  it('serves SQL over its datasets and views at status.endpoint with the derived token', async () => {
    const result = await (await lakeClient()).sql({ query: 'SELECT count(*) AS n FROM big_orders' });
    expect(result.rows).toEqual([{ n: 5 }]);
  });

  it('pushes a changed config and becomes Ready with the added dataset', async () => {
    const edited = await editSpec((spec) => ({
      ...spec,
      config: { ...spec.config, datasets: [orders(), customers()] },
    }));
    const lake = await waitFor(
      'the new generation is applied',
      (l) => l.metadata.generation === edited.metadata.generation && readyFor(l),
    );
    expect(lake.status?.datasets?.customers).toMatchObject({
      ok: true,
      status: 'ready',
      connectorId: 'file',
    });
    const result = await (await lakeClient()).sql({ query: 'SELECT name FROM customers ORDER BY id' });
    expect(result.rows).toEqual([{ name: 'Ada' }, { name: 'Grace' }]);
  }, 120_000);

  it('reports a secret reference missing from the Secret as Ready False ConfigInvalid, naming the key', async () => {
    const s3 = (keyRef: string): Dataset => ({
      name: 'remote',
      from: 's3://unreachable-bucket/data.parquet',
      params: {
        s3_auth: 'key',
        s3_key: keyRef,
        s3_secret: '${secrets:remote_s3_secret}',
        // Nothing listens on port 1: the connection is refused at once.
        s3_endpoint: 'http://127.0.0.1:1',
        allow_http: 'true',
        s3_region: 'us-east-1',
        client_timeout: '2s',
      },
    });
    await editSpec((spec) => ({
      ...spec,
      config: { ...spec.config, datasets: [orders(), customers(), s3('${secrets:remote_s3_key}')] },
    }));
    const lake = await waitFor(
      'the config is reported invalid',
      (l) => l.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'ConfigInvalid') === true,
    );
    const ready = lake.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.status).toBe('False');
    expect(ready?.message).toContain('remote_s3_key');
  }, 120_000);

  it('resolves ${secrets:...} from the Secret: the unreachable s3 dataset fails alone, its credentials nowhere', async () => {
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: CONTEXT_LAKE_SECRET_NAME, namespace: NAMESPACE },
      data: secretData({ remote_s3_key: ACCESS_KEY, remote_s3_secret: SECRET_KEY }),
    });
    const lake = await waitFor(
      'the s3 dataset has failed',
      (l) => l.status?.datasets?.remote?.status === 'error',
    );
    expect(lake.status?.datasets).toMatchObject({
      orders: { ok: true, status: 'ready' },
      customers: { ok: true, status: 'ready' },
      remote: { ok: false, status: 'error', connectorId: 's3' },
    });
    expect(lake.status?.datasets?.remote?.error).toMatch(/unreachable-bucket/);
    await waitFor('the generation with the failed dataset is applied', readyFor);
    expect(await eventsIncluding('DatasetFailed')).toContain('DatasetFailed');
    const everything = JSON.stringify([
      await lakeNow(),
      (await store.list(EventType, { namespace: NAMESPACE })).items,
    ]);
    expect(everything).not.toContain(ACCESS_KEY);
    expect(everything).not.toContain(SECRET_KEY);
  }, 120_000);

  it('keeps the S3 counters another writer put in status through its own later status writes', async () => {
    const counters = {
      s3EventCount: 3,
      s3LastEventAt: '2026-01-01T00:00:00.000Z',
      s3LastRefreshAt: '2026-01-01T00:00:01.000Z',
    };
    // As the notification consumer does: a resourceVersion-checked status write, retried on conflict.
    for (;;) {
      const lake = await lakeNow();
      const datasets = lake.status?.datasets ?? {};
      const orders = datasets.orders;
      if (orders === undefined) throw new Error('no status for orders');
      try {
        await store.replaceStatus(
          ContextLakeType,
          {
            ...lake,
            status: { ...lake.status, datasets: { ...datasets, orders: { ...orders, ...counters } } },
          },
          { resourceVersion: lake.metadata.resourceVersion },
        );
        break;
      } catch (err) {
        if (!isStoreError(err, 'Conflict')) throw err;
      }
    }
    // A new generation makes the reconciler rewrite conditions and datasets at least twice.
    const edited = await editSpec((spec) => ({
      ...spec,
      config: {
        ...spec.config,
        views: [...spec.config.views, { name: 'few_orders', sql: 'SELECT * FROM orders LIMIT 2' }],
      },
    }));
    const lake = await waitFor(
      'the new generation is applied',
      (l) => l.metadata.generation === edited.metadata.generation && readyFor(l),
    );
    expect(lake.status?.datasets?.orders).toMatchObject({ ok: true, status: 'ready', ...counters });
  }, 120_000);

  it('hibernates on request: vmStatus paused, every dataset unknown, the process gone', async () => {
    const pid = await lakePid();
    expect(pid).toEqual(expect.any(Number));
    await editSpec((spec) => ({ ...spec, operatingMode: 'Hibernated' }));
    const lake = await waitFor('the lake is paused', (l) => l.status?.vmStatus === 'paused');
    expect(Object.values(lake.status?.datasets ?? {}).map((d) => d.status)).toEqual([
      'unknown',
      'unknown',
      'unknown',
    ]);
    expect(lake.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Paused',
    });
    if (pid !== undefined) expect(alive(pid)).toBe(false);
    expect(await eventsIncluding('LakeHibernated')).toContain('LakeHibernated');
  }, 120_000);

  it('resumes when Running again and becomes Ready with its datasets loaded again', async () => {
    await editSpec((spec) => ({ ...spec, operatingMode: 'Running' }));
    const lake = await waitFor(
      'the lake is ready again',
      (l) => l.status?.vmStatus === 'running' && readyFor(l),
    );
    expect(lake.status?.datasets?.orders).toMatchObject({ ok: true, status: 'ready' });
    const result = await (await lakeClient()).sql({ query: 'SELECT count(*) AS n FROM orders' });
    expect(result.rows).toEqual([{ n: 10 }]);
  }, 120_000);

  it('redeploys on a new restartedAt: a new lake server process, Ready again', async () => {
    const before = await lakePid();
    await editSpec((spec) => ({ ...spec, restartedAt: new Date().toISOString() }));
    await waitFor('a new process is ready', (l) => readyFor(l));
    const deadline = Date.now() + WAIT_MS;
    while ((await lakePid()) === before && Date.now() < deadline) await sleep(200);
    const after = await lakePid();
    expect(after).toEqual(expect.any(Number));
    expect(after).not.toBe(before);
    if (before !== undefined) expect(alive(before)).toBe(false);
    // The new process answers SQL once the operator has pushed it the configuration.
    const deadline2 = Date.now() + WAIT_MS;
    for (;;) {
      await waitFor('the redeployed lake is ready', (l) => readyFor(l) && l.status?.vmStatus === 'running');
      const answer = await (
        await lakeClient()
      )
        .sql({ query: 'SELECT count(*) AS n FROM customers' })
        .catch(() => undefined);
      if (answer !== undefined || Date.now() > deadline2) {
        expect(answer?.rows).toEqual([{ n: 2 }]);
        break;
      }
      await sleep(300);
    }
  }, 180_000);

  it('hibernates by itself after its idle timeout, saying so in an annotation', async () => {
    await editSpec((spec) => ({ ...spec, idleTimeout: '3s' }));
    const lake = await waitFor(
      'the idle lake hibernated itself',
      (l) => l.spec.operatingMode === 'Hibernated' && l.status?.vmStatus === 'paused',
    );
    expect(lake.metadata.annotations?.[HIBERNATED_BY_ANNOTATION]).toBe('idle-timeout');
    expect(await eventsIncluding('IdleTimeout')).toContain('IdleTimeout');
  }, 120_000);
});
