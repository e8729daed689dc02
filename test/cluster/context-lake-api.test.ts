// The context-lake API on the real kube-apiserver, with notification queues on moto's SQS: the
// ContextLake it writes passes the CRD's validation, the credentials Secret is owned by it (so the
// real garbage collector removes it with the lake), and saving a dataset with notifications makes
// the organization's queue and answers its ARN. Moto is never reset: names are unique to this run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import {
  CONTEXT_LAKE_NAME,
  CONTEXT_LAKE_SECRET_NAME,
  ContextLakeType,
} from '../../crds/context-lake/types.js';
import { SecretType, secretValue } from '../../crds/index.js';
import { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import { call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { clusterStore, eventually, kubectl, testCluster } from './support.js';

const suffix = randomBytes(3).toString('hex');
const org = `lakeapi-${suffix}`;
const namespace = `agentry-org-${org}`;
const SECRET_VALUE = `cluster-lake-secret-${suffix}`;
const store = clusterStore();
let queues: SqsNotificationQueues;
let api: TestApi;
let key: string;

async function lakeCall(method: string, path: string, body?: unknown) {
  const res = await call(api, `/v1/context-lake${path}`, {
    key,
    method,
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  queues = new SqsNotificationQueues({
    region: 'us-east-1',
    endpoint: testCluster().motoUrl,
    queuePrefix: `agentry-lake-api-${suffix}-`,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  api = await startTestApi({ store, createNamespaces: true, notificationQueues: queues });
  key = await api.key({ org, user: 'kim' });
});
afterAll(async () => {
  await api.stop();
  queues.client.destroy();
});

describe('the context-lake API on a real kube-apiserver', () => {
  it('stores a ContextLake the CRD accepts, and its credentials in a Secret it owns', async () => {
    const added = await lakeCall('POST', '/datasets', {
      name: 'keyed',
      from: `s3://agentry-lake-${suffix}/keyed.parquet`,
      params: { s3_auth: 'key', s3_key: 'AKIAEXAMPLECLUSTER01', s3_secret: SECRET_VALUE },
    });
    expect(added.status).toBe(201);

    const lake = await store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
    expect(lake?.spec.config.datasets[0]?.params?.s3_secret).toBe('${secrets:keyed.s3_secret}');
    expect(lake?.spec.operatingMode).toBe('Hibernated');
    const secret = await store.get(SecretType, namespace, CONTEXT_LAKE_SECRET_NAME);
    expect(secret === undefined ? undefined : secretValue(secret, 'keyed.s3_secret')).toBe(SECRET_VALUE);
    expect(secret?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'ContextLake',
      uid: lake?.metadata.uid,
    });

    const printed = await kubectl(['get', 'contextlakes', '-n', namespace, '-o', 'yaml']);
    expect(printed).toContain('keyed.s3_secret');
    expect(printed).not.toContain(SECRET_VALUE);
  });

  it('makes the organization queue on moto and answers its ARN for a dataset with notifications', async () => {
    const added = await lakeCall('POST', '/datasets', {
      name: 'events',
      from: `s3://agentry-lake-${suffix}/events/`,
      params: { file_format: 'json' },
      notifications: true,
    });
    expect(added.status).toBe(201);
    const setup = added.json.notifications as { queueArn: string; region: string; instructions: string[] };
    expect(setup.region).toBe('us-east-1');
    expect(setup.queueArn).toMatch(new RegExp(`^arn:aws:sqs:us-east-1:\\d+:agentry-lake-api-${suffix}-`));
    expect(setup.instructions.length).toBeGreaterThan(0);
    const { QueueUrl } = await queues.client.send(
      new GetQueueUrlCommand({ QueueName: queues.queueName(namespace) }),
    );
    expect(QueueUrl).toBeDefined();

    const patched = await lakeCall('PATCH', '/config', {
      updateDatasets: { events: { params: { file_format: 'csv' } } },
    });
    expect(Object.keys(patched.json.notifications as object)).toEqual(['events']);
  });

  it('sets operatingMode Running on start, in the custom resource', async () => {
    expect((await lakeCall('POST', '/start')).status).toBe(202);
    const lake = await store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
    expect(lake?.spec.operatingMode).toBe('Running');
  });

  it('loses the credentials Secret to the garbage collector when the lake is deleted', async () => {
    await store.delete(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
    await eventually(
      'the Secret is garbage-collected',
      async () =>
        (await store.get(SecretType, namespace, CONTEXT_LAKE_SECRET_NAME)) === undefined ? true : undefined,
      60_000,
    );
  });
});
