// The lake-notifications controller's loops over time, against moto and the real kube-apiserver:
// they stop when a lake no longer asks for notifications and when the controller stops, and a put
// refreshes a real lake server (started in process, DuckDB over moto's S3) within seconds.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteQueueCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { Registry } from 'prom-client';
import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../crds/context-lake/types.js';
import type { Dataset } from '../../crds/index.js';
import { LakeConfigSchema } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import { ControllerManager } from '../../operator/controller/index.js';
import { addLakeNotificationsController } from '../../operator/context-lake/controller.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { LakeClient } from '../../platform/lake-client.js';
import { isStoreError } from '../../platform/store/types.js';
import {
  LakeNotificationsWorld,
  metricValue,
  notifiedDataset as dataset,
  readyAt,
  testLogger,
} from './lake-notifications-support.js';
import { ScopedStore } from './operator-support.js';
import { clusterStore, eventually, testCluster } from './support.js';

const logger = testLogger();
const installationKey = new InstallationKey(randomBytes(32));
const namespaces = new Set<string>();
let world: LakeNotificationsWorld;
let manager: ControllerManager | undefined;
let registry: Registry;

const metric = (name: string) => metricValue(registry, name);

/** A manager running only the lake-notifications controller, seeing the namespaces of `scope`. */
function startNotifications(scope: Set<string>, ownRegistry: Registry) {
  const store = new ScopedStore(clusterStore(), { namespaces: scope, organizations: new Set() });
  const started = new ControllerManager({ store, logger, registry: ownRegistry });
  addLakeNotificationsController(started, {
    store,
    logger,
    registry: ownRegistry,
    queues: world.queues,
    installationKey,
  });
  return { manager: started, store };
}

beforeAll(async () => {
  world = new LakeNotificationsWorld();
  registry = new Registry();
  manager = startNotifications(namespaces, registry).manager;
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await world.close();
});

describe('a lake that no longer needs notifications', () => {
  it('stops polling its queue once no dataset asks for notifications', async () => {
    const bucket = await world.newBucket('off');
    const { namespace } = await world.createLake(
      namespaces,
      [dataset('orders', `s3://${bucket}/off/`)],
      'Hibernated',
      {},
    );
    const queue = await world.queueOf(namespace);
    const pollers = await metric('agentry_lake_s3_pollers');
    const lake = await world.store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
    if (lake === undefined) throw new Error('the lake is gone');
    const quiet = lake.spec.config.datasets.map((d) => ({ ...d, notifications: false }));
    await world.store.replace(ContextLakeType, {
      ...lake,
      spec: { ...lake.spec, config: { ...lake.spec.config, datasets: quiet } },
    });
    await eventually('the poller to stop', async () =>
      (await metric('agentry_lake_s3_pollers')) === pollers - 1 ? true : undefined,
    );

    await world.notify(bucket, queue.queueArn, 'off/');
    await world.put(bucket, 'off/a.csv');
    // A running poller deletes within a receive; two seconds leave it ample time to (wrongly) do so.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await world.messagesLeft(queue.queueUrl)).toBeGreaterThanOrEqual(1);
    expect((await world.datasetStatus(namespace, 'orders'))?.s3EventCount).toBeUndefined();
  });
});

describe('a queue deleted by hand', () => {
  it('is created again, and bucket events flow through it once more', async () => {
    const bucket = await world.newBucket('gone');
    const { namespace } = await world.createLake(
      namespaces,
      [dataset('orders', `s3://${bucket}/gone/`)],
      'Hibernated',
      {},
    );
    const queue = await world.queueOf(namespace);
    await world.queues.client.send(new DeleteQueueCommand({ QueueUrl: queue.queueUrl }));

    // The receive in flight may wait out its 20 s long poll first (moto answers it only then).
    await eventually(
      'the queue to exist again',
      async () => {
        try {
          await world.queues.client.send(
            new GetQueueUrlCommand({ QueueName: world.queues.queueName(namespace) }),
          );
          return true;
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    await world.notify(bucket, queue.queueArn, 'gone/');
    await world.put(bucket, 'gone/a.csv');
    await world.countOf(namespace, 'orders', 1);
    expect(await metric('agentry_lake_s3_poll_errors_total')).toBeGreaterThanOrEqual(1);
  }, 120_000);
});

describe('with a real lake server', () => {
  const S3_PARAMS = {
    file_format: 'csv',
    s3_auth: 'key',
    s3_region: 'us-east-1',
    allow_http: 'true',
  };

  /** Sets the lake's endpoint and Ready, as the ContextLake reconciler would, keeping the rest. */
  async function markReady(namespace: string, endpoint: string): Promise<void> {
    for (;;) {
      const lake = await world.store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
      if (lake === undefined) throw new Error('the lake is gone');
      const ready = readyAt(endpoint);
      const status = {
        ...lake.status,
        ...ready,
        conditions: [...(lake.status?.conditions ?? []), ...(ready.conditions ?? [])],
      };
      try {
        await world.store.replaceStatus(
          ContextLakeType,
          { ...lake, status },
          { resourceVersion: lake.metadata.resourceVersion },
        );
        return;
      } catch (err) {
        if (!isStoreError(err, 'Conflict')) throw err;
      }
    }
  }

  it('refreshes a running lake after a put, and the new rows are queryable within seconds', async () => {
    const motoUrl = testCluster().motoUrl;
    const bucket = await world.newBucket('real');
    await world.put(bucket, 'orders/1.csv', 'id,amount\n1,10\n2,20\n');
    const stored: Dataset = {
      name: 'orders',
      from: `s3://${bucket}/orders/`,
      notifications: true,
      params: {
        ...S3_PARAMS,
        s3_endpoint: motoUrl,
        s3_key: '${secrets:s3_key}',
        s3_secret: '${secrets:s3_secret}',
      },
    };
    const { namespace, lake } = await world.createLake(namespaces, [stored], 'Running', {});
    const dataDir = await mkdtemp(join(tmpdir(), 'lake-notif-'));
    const token = installationKey.runnerToken(lake);
    const server = await startLakeServer(
      LakeConfigSchema.parse({
        AGENTRY_LAKE_TOKEN: token,
        AGENTRY_LAKE_HOST: '127.0.0.1',
        AGENTRY_LAKE_PORT: '0',
        AGENTRY_LAKE_DATA_DIR: dataDir,
        AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
        // S3 is moto on a loopback or private address.
        AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
        AGENTRY_LAKE_THREADS: '1',
        AGENTRY_LAKE_CONNECTORS: 's3',
        AGENTRY_LOG_LEVEL: 'silent',
      }),
      { logger },
    );
    try {
      const client = new LakeClient({ endpoint: server.url, token });
      const resolved = { ...stored, params: { ...stored.params, s3_key: 'test', s3_secret: 'test' } };
      await client.applyConfig({
        generation: 1,
        config: { version: 'v1', kind: 'Spicepod', name: 'lake', datasets: [resolved], views: [] },
      });
      const count = async (): Promise<unknown> =>
        (await client.sql({ query: 'SELECT count(*) AS n FROM orders' })).rows[0]?.n;
      await eventually('the first load', async () =>
        (await client.status()).datasets.orders?.status === 'ready' ? true : undefined,
      );
      expect(await count()).toBe(2);
      await markReady(namespace, server.url);
      const queue = await world.queueOf(namespace);
      await world.notify(bucket, queue.queueArn, 'orders/');

      await world.put(bucket, 'orders/2.csv', 'id,amount\n3,30\n4,40\n5,50\n');
      await eventually('the new rows', async () => ((await count()) === 5 ? true : undefined));
      // The count is written right after the lake accepted the refresh.
      const entry = await world.countOf(namespace, 'orders', 1);
      expect(entry.s3LastRefreshAt).toBeDefined();
      await world.drained(queue.queueUrl);
    } finally {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutdown', () => {
  it('ends the long polls when the controller stops, leaving later events in the queue', async () => {
    const own = new Set<string>();
    const ownRegistry = new Registry();
    const bucket = await world.newBucket('stop');
    // Outside the file's main scope: only this manager polls it.
    const { namespace } = await world.createLake(
      own,
      [dataset('orders', `s3://${bucket}/stop/`)],
      'Hibernated',
      {},
    );
    const { manager: ownManager, store: ownStore } = startNotifications(own, ownRegistry);
    await ownManager.start();
    try {
      const queue = await world.queueOf(namespace);
      const pollers = () => metricValue(ownRegistry, 'agentry_lake_s3_pollers');
      await eventually('the poll loop to start', async () => ((await pollers()) === 1 ? true : undefined));

      await ownManager.stop();
      // Well under the 20 s long poll: the receive in flight was aborted, not waited out.
      await eventually(
        'the poll loop to end',
        async () => ((await pollers()) === 0 ? true : undefined),
        10_000,
      );
      await world.notify(bucket, queue.queueArn, 'stop/');
      await world.put(bucket, 'stop/a.csv');
      // A running poller deletes within a receive; two seconds leave it ample time to (wrongly) do so.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(await world.messagesLeft(queue.queueUrl)).toBeGreaterThanOrEqual(1);
    } finally {
      await ownManager.stop();
      await ownStore.close();
    }
  });
});
