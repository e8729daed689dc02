// S3 bucket notifications for context lakes against real peers: moto's S3 delivers bucket events
// to the SQS queue SqsNotificationQueues made, the lake-notifications controller runs in a
// ControllerManager on the real kube-apiserver (a store scoped to this file's namespaces, since the
// cluster is shared), and a lake server's refresh endpoint is a loopback HTTP server that records.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Registry } from 'prom-client';
import { ControllerManager } from '../../operator/controller/index.js';
import { addLakeNotificationsController } from '../../operator/context-lake/controller.js';
import { InstallationKey } from '../../platform/installation-key.js';
import {
  CounterWriteFaults,
  LakeNotificationsWorld,
  RefreshRecorder,
  metricValue,
  notifiedDataset as dataset,
  readyAt,
  testLogger,
} from './lake-notifications-support.js';
import { clusterStore, eventually } from './support.js';
import { ScopedStore } from './operator-support.js';

const logger = testLogger();
const installationKey = new InstallationKey(randomBytes(32));
const namespaces = new Set<string>();
const faults = new CounterWriteFaults();
const lakeServer = new RefreshRecorder();
let world: LakeNotificationsWorld;
let manager: ControllerManager | undefined;
let registry: Registry;
let lakeEndpoint = '';

const metric = (name: string) => metricValue(registry, name);

beforeAll(async () => {
  world = new LakeNotificationsWorld();
  lakeEndpoint = await lakeServer.start();
  registry = new Registry();
  const managerStore = faults.wrap(new ScopedStore(clusterStore(), { namespaces, organizations: new Set() }));
  manager = new ControllerManager({ store: managerStore, logger, registry });
  addLakeNotificationsController(manager, {
    store: managerStore,
    logger,
    registry,
    queues: world.queues,
    installationKey,
    retryDelayMs: 1000,
  });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await lakeServer.stop();
  await world.close();
});

describe('SqsNotificationQueues on moto', () => {
  it('ensureQueue is idempotent and answers the queue ARN, with a policy letting S3 send', async () => {
    const namespace = `agentry-org-idem-${world.suffix}`;
    const first = await world.queues.ensureQueue(namespace);
    const second = await world.queues.ensureQueue(namespace);
    expect(second).toEqual(first);
    expect(first.queueArn).toMatch(
      new RegExp(`^arn:aws:sqs:us-east-1:\\d{12}:agentry-test-${world.suffix}-${namespace}$`),
    );
    const { Attributes } = await world.queues.client.send(
      new GetQueueAttributesCommand({ QueueUrl: first.queueUrl, AttributeNames: ['All'] }),
    );
    expect(Attributes?.ReceiveMessageWaitTimeSeconds).toBe('20');
    expect(JSON.parse(Attributes?.Policy ?? '{}')).toMatchObject({
      Statement: [
        { Principal: { Service: 's3.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: first.queueArn },
      ],
    });
  });
});

describe('the lake-notifications controller', () => {
  it('counts only the events under a dataset prefix, refreshes nothing on a paused lake, and empties the queue', async () => {
    const bucket = await world.newBucket('paused');
    const { namespace } = await world.createLake(
      namespaces,
      [dataset('orders', `s3://${bucket}/in/2026/`)],
      'Hibernated',
      {
        vmStatus: 'paused',
        endpoint: lakeEndpoint,
      },
    );
    const queue = await world.queueOf(namespace);
    // The bucket sends everything under in/: in/other.csv reaches the queue and must not count.
    await world.notify(bucket, queue.queueArn, 'in/');
    const unmatchedBefore = await metric('agentry_lake_s3_events_unmatched_total');
    await world.put(bucket, 'in/2026/a.csv');
    await world.put(bucket, 'in/2026/b c.csv');
    await world.put(bucket, 'in/2026/café+日本.csv');
    await world.put(bucket, 'in/other.csv');
    await world.put(bucket, 'out/c.csv');

    await world.countOf(namespace, 'orders', 3);
    await world.drained(queue.queueUrl);
    const entry = await world.datasetStatus(namespace, 'orders');
    expect(entry?.s3EventCount).toBe(3);
    expect(entry?.s3LastEventAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(entry?.s3LastRefreshAt).toBeUndefined();
    expect(lakeServer.requests).toHaveLength(0);
    expect(await metric('agentry_lake_s3_events_unmatched_total')).toBe(unmatchedBefore + 1);
  });

  it('asks a running lake to refresh the matched dataset with its token and records when it accepted', async () => {
    const bucket = await world.newBucket('running');
    const { namespace, lake } = await world.createLake(
      namespaces,
      [
        dataset('orders', `s3://${bucket}/running/orders/`),
        dataset('customers', `s3://${bucket}/running/customers.csv`),
      ],
      'Running',
      readyAt(lakeEndpoint),
    );
    const queue = await world.queueOf(namespace);
    await world.notify(bucket, queue.queueArn, 'running/');
    const before = lakeServer.requests.length;
    await world.put(bucket, 'running/orders/1.csv');

    const entry = await eventually('a refresh time', async () => {
      const current = await world.datasetStatus(namespace, 'orders');
      return current?.s3LastRefreshAt === undefined ? undefined : current;
    });
    expect(entry.s3EventCount).toBe(1);
    const refreshes = lakeServer.requests.slice(before);
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]?.path).toBe('/v1/refresh');
    // The event travels as an object change, for the lake to append that object's rows alone.
    expect(refreshes[0]?.body).toEqual({
      datasets: ['orders'],
      changes: [
        {
          dataset: 'orders',
          event: 'created',
          bucket,
          key: 'running/orders/1.csv',
          etag: expect.any(String),
          size: expect.any(Number),
          // moto's records carry no sequencer (AWS's do).
          eventTime: expect.any(String),
        },
      ],
    });
    expect(refreshes[0]?.headers.authorization).toBe(`Bearer ${installationKey.runnerToken(lake)}`);
    expect((await world.datasetStatus(namespace, 'customers'))?.s3EventCount).toBeUndefined();
    await world.drained(queue.queueUrl);
  });

  it('leaves events in the queue when their status write fails, and counts them once when they come back', async () => {
    const bucket = await world.newBucket('flaky');
    const { namespace } = await world.createLake(
      namespaces,
      [dataset('orders', `s3://${bucket}/flaky/`)],
      'Hibernated',
      {
        vmStatus: 'paused',
      },
    );
    const queue = await world.queueOf(namespace);
    await world.notify(bucket, queue.queueArn, 'flaky/');
    faults.failNext(namespace, 1);
    await world.put(bucket, 'flaky/a.csv');

    await world.countOf(namespace, 'orders', 1);
    expect(faults.failed).toContain(namespace);
    await world.drained(queue.queueUrl);
    expect((await world.datasetStatus(namespace, 'orders'))?.s3EventCount).toBe(1);
  });

  it('deletes a message that is not an S3 event and counts it as malformed', async () => {
    const bucket = `lake-notif-junk-${world.suffix}`;
    const { namespace } = await world.createLake(
      namespaces,
      [dataset('orders', `s3://${bucket}/junk/`)],
      'Hibernated',
      {},
    );
    const queue = await world.queueOf(namespace);
    const before = await metric('agentry_lake_s3_malformed_messages_total');
    await world.queues.client.send(
      new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'definitely not json' }),
    );

    await eventually('the malformed message to be counted', async () =>
      (await metric('agentry_lake_s3_malformed_messages_total')) > before ? true : undefined,
    );
    await world.drained(queue.queueUrl);
  });
});
