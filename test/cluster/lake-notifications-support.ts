// What the lake-notifications cluster tests share: moto's S3 and SQS seen through the AWS SDK, the
// test's ContextLakes on the real kube-apiserver, a fault switch for status writes and a stand-in
// for a lake server's refresh endpoint. Moto is never reset: buckets, queues and namespaces carry
// a suffix unique to the run.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Registry } from 'prom-client';
import { CONTEXT_LAKE_NAME, ContextLakeType } from '../../crds/context-lake/types.js';
import type {
  ContextLake,
  ContextLakeStatus,
  Dataset,
  DatasetStatus,
  OperatingMode,
} from '../../crds/index.js';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { bucketNotificationConfiguration } from '../../platform/lake-notifications/instructions.js';
import { SqsNotificationQueues } from '../../platform/lake-notifications/queues.js';
import type { NotificationQueue } from '../../platform/lake-notifications/types.js';
import { createLogger } from '../../platform/log.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore, StatusWriteOptions } from '../../platform/store/types.js';
import type { KubernetesStore } from '../../platform/store/kubernetes.js';
import { clusterStore, createTestNamespace, eventually, testCluster } from './support.js';

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

/** AGENTRY_TEST_OPERATOR_LOG=debug shows the controller's logs while a test is being written. */
export const testLogger = (): Logger =>
  createLogger({ level: process.env.AGENTRY_TEST_OPERATOR_LOG === 'debug' ? 'debug' : 'silent' });

/** An S3 dataset with notifications, as the API stores it. */
export const notifiedDataset = (name: string, from: string): Dataset => ({
  name,
  from,
  notifications: true,
  params: { file_format: 'csv' },
});

/** What the ContextLake reconciler writes for a lake that is up and loaded. */
export const readyAt = (endpoint: string): ContextLakeStatus => ({
  vmStatus: 'running',
  endpoint,
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Loaded',
      message: 'loaded',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    },
  ],
});

/** The sum of a metric's values in a registry (0 when it has none yet). */
export async function metricValue(registry: Registry, name: string): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.reduce((sum, value) => sum + value.value, 0);
}

/** The test's world: moto's S3 and SQS, the queues under test, lakes in namespaces of their own. */
export class LakeNotificationsWorld {
  readonly suffix = randomBytes(3).toString('hex');
  readonly store: KubernetesStore = clusterStore();
  readonly s3: S3Client;
  readonly queues: SqsNotificationQueues;

  constructor() {
    const endpoint = testCluster().motoUrl;
    this.s3 = new S3Client({ endpoint, region: 'us-east-1', credentials: CREDENTIALS, forcePathStyle: true });
    this.queues = new SqsNotificationQueues({
      region: 'us-east-1',
      endpoint,
      credentials: CREDENTIALS,
      queuePrefix: `agentry-test-${this.suffix}-`,
    });
  }

  async close(): Promise<void> {
    this.queues.close();
    this.s3.destroy();
    await this.store.close();
  }

  /** A new namespace (added to `scope`: what the operator under test sees) with its ContextLake and status. */
  async createLake(
    scope: Set<string>,
    datasets: Dataset[],
    operatingMode: OperatingMode,
    status: ContextLakeStatus,
  ): Promise<{ namespace: string; lake: ContextLake }> {
    const namespace = await createTestNamespace(this.store, 'lake-notif');
    scope.add(namespace);
    const created = await this.store.create(ContextLakeType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'ContextLake',
      metadata: { name: CONTEXT_LAKE_NAME, namespace },
      spec: {
        config: { version: 'v1', kind: 'Spicepod', name: 'lake', datasets, views: [] },
        operatingMode,
        idleTimeout: '15m',
      },
    });
    const lake = await this.store.replaceStatus(ContextLakeType, { ...created, status });
    return { namespace, lake };
  }

  /** Waits until the controller recorded the lake's queue, ready; returns it. */
  queueOf(namespace: string): Promise<NotificationQueue> {
    return eventually('the queue recorded in the lake status', async () => {
      const lake = await this.store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
      const ready = lake?.status?.conditions?.find((c) => c.type === 'NotificationsReady');
      return ready?.status === 'True' ? lake?.status?.notifications : undefined;
    });
  }

  /** A bucket of its own for one test: a notification configuration replaces the bucket's previous one. */
  async newBucket(tag: string): Promise<string> {
    const bucket = `lake-notif-${tag}-${this.suffix}`;
    await this.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    return bucket;
  }

  /** Bucket events under `prefix` go to the queue (created and removed objects), as the instructions say. */
  async notify(bucket: string, queueArn: string, prefix: string): Promise<void> {
    await this.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: bucketNotificationConfiguration(queueArn, prefix),
      }),
    );
  }

  async put(bucket: string, key: string, body = 'id\n1\n'): Promise<void> {
    await this.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  }

  /** Messages in the queue, visible or being handled. */
  async messagesLeft(queueUrl: string): Promise<number> {
    const { Attributes } = await this.queues.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }

  drained(queueUrl: string): Promise<true> {
    return eventually('the queue to be empty', async () =>
      (await this.messagesLeft(queueUrl)) === 0 ? true : undefined,
    );
  }

  async datasetStatus(namespace: string, name: string): Promise<DatasetStatus | undefined> {
    return (await this.store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME))?.status?.datasets?.[name];
  }

  countOf(namespace: string, name: string, count: number): Promise<DatasetStatus> {
    return eventually(`${name} to count ${count} events`, async () => {
      const entry = await this.datasetStatus(namespace, name);
      return entry?.s3EventCount === count ? entry : undefined;
    });
  }
}

/** Fails the status writes that carry S3 counters in chosen namespaces: a store outage, on demand. */
export class CounterWriteFaults {
  readonly failed: string[] = [];
  private readonly remaining = new Map<string, number>();

  failNext(namespace: string, writes: number): void {
    this.remaining.set(namespace, writes);
  }

  /** `inner` with its replaceStatus guarded; every other call goes straight through. */
  wrap(inner: ResourceStore): ResourceStore {
    return Object.assign(Object.create(inner) as ResourceStore, {
      replaceStatus: <T extends KubeObject>(
        type: ResourceType<T>,
        object: T,
        options?: StatusWriteOptions,
      ) => {
        const namespace = object.metadata.namespace ?? '';
        const left = this.remaining.get(namespace) ?? 0;
        const status = (object as Partial<ContextLake>).status;
        const counts = Object.values(status?.datasets ?? {}).some(
          (entry) => entry.s3EventCount !== undefined,
        );
        if (type.kind === ContextLakeType.kind && counts && left > 0) {
          this.remaining.set(namespace, left - 1);
          this.failed.push(namespace);
          return Promise.reject(new Error('injected: the API server is unavailable'));
        }
        return inner.replaceStatus(type, object, options);
      },
    });
  }
}

/** Stands in for a lake server's POST /v1/refresh: answers 202 and records what it was asked. */
export class RefreshRecorder {
  readonly requests: { path: string; headers: IncomingHttpHeaders; body: unknown }[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
        this.requests.push({ path: req.url ?? '', headers: req.headers, body });
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: [] }));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.server === undefined) resolve();
      else
        this.server.close(() => {
          resolve();
        });
    });
  }
}
