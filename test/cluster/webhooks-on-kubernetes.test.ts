// The task → webhook path against the real kube-apiserver: webhooks registered and tasks created
// through the REST API (Kubernetes store), the operator in-process with the pod runtime and the
// webhook delivery controller, a receiver on loopback verifying each delivery with Node's crypto and
// the PEM of GET /v1/webhooks/public_key. KWOK's fake nodes run no containers (and no volume is bound
// for the workspaces' disks here), so a workspace's runner never answers: no prompt is dispatched,
// and `task.created` (written with the Task's first status write) is the only event that can happen.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { SecretType, TaskConditions, TaskType, WebhookType } from '../../crds/index.js';
import type { OutboxEntry, Task, Webhook } from '../../crds/index.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { ensureInstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { WEBHOOK_SIGNING_KEYS_SECRET } from '../../platform/webhook-signing.js';
import { CONTROL_NAMESPACE, call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { WebhookReceiver, verifyDelivery } from '../support/webhook-receiver.js';
import {
  POD_DEFAULTS,
  POD_IMAGE,
  ScopedStore,
  deleteAgentComputers,
  deleteNamespace,
} from './operator-support.js';
import { clusterStore, eventually } from './support.js';

const TEST_MS = 60_000;
const suffix = randomBytes(3).toString('hex');
const store = clusterStore();
const logger = createLogger({ level: 'silent' });

/** One organization of this file: its key, its receiver and the webhook registered for it. */
interface Tenant {
  org: string;
  namespace: string;
  secret: string;
  receiver: WebhookReceiver;
  key: string;
  webhookId: string;
}

const tenant = (org: string): Tenant => ({
  org,
  namespace: `agentry-org-${org}`,
  secret: `whsec-${org}-${randomBytes(12).toString('hex')}`,
  receiver: new WebhookReceiver(),
  key: '',
  webhookId: '',
});

const happy = tenant(`wh-ok-${suffix}`);
const flaky = tenant(`wh-retry-${suffix}`);
const tenants = [happy, flaky];
let api: TestApi | undefined;
let operator: RunningOperator | undefined;
let operatorStore: ScopedStore | undefined;
let publicKeyPem = '';

/** POST /v1/webhooks for a tenant's receiver, subscribed to every event, with a shared secret. */
async function register(t: Tenant, on: TestApi): Promise<void> {
  t.key = await on.key({ org: t.org });
  await t.receiver.start();
  const res = await call(on, '/v1/webhooks', {
    key: t.key,
    method: 'POST',
    body: {
      url: t.receiver.url,
      events: ['task.created', 'task.running', 'task.completed', 'task.failed', 'task.canceled'],
      secret: t.secret,
    },
  });
  if (res.status !== 201) throw new Error(`POST /v1/webhooks: ${res.status} ${await res.text()}`);
  t.webhookId = ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  api = await startTestApi({ store: clusterStore(), createNamespaces: true });
  for (const t of tenants) await register(t, api);
  const document = await call(api, '/v1/webhooks/public_key', { key: happy.key });
  expect(document.status).toBe(200);
  publicKeyPem = ((await document.json()) as { publicKeyPem: string }).publicKeyPem;

  operatorStore = new ScopedStore(clusterStore(), {
    namespaces: new Set(tenants.map((t) => t.namespace)),
    organizations: new Set(tenants.map((t) => t.org)),
  });
  operator = await startOperator({
    store: operatorStore,
    logger,
    registry: new Registry(),
    runtimes: new Map([
      [
        'pod',
        new PodRuntime({
          store: operatorStore,
          controlNamespace: CONTROL_NAMESPACE,
          defaultImage: POD_IMAGE,
          defaults: POD_DEFAULTS,
          logger,
        }),
      ],
    ]),
    defaultRuntime: 'pod',
    controlNamespace: CONTROL_NAMESPACE,
    installationKey: await ensureInstallationKey(store, CONTROL_NAMESPACE),
    executors: new ExecutorCatalog(),
    webhooks: {
      publicUrl: 'http://agentry.test',
      allowPrivateTargets: true,
      retrySchedule: [300, 300, 500, 1000],
    },
  });
}, TEST_MS);

afterAll(async () => {
  try {
    // The workspaces' pods go with their AgentComputers (the operator's finalizer removes them).
    for (const t of tenants) if (operator !== undefined) await deleteAgentComputers(store, t.namespace);
  } finally {
    await operator?.stop();
    await operatorStore?.close();
    for (const t of tenants) await t.receiver.stop();
    await api?.stop();
    for (const t of tenants) await deleteNamespace(store, t.namespace, t.org);
    await store.close();
  }
}, 180_000);

function theApi(): TestApi {
  if (api === undefined) throw new Error('the API server did not start');
  return api;
}

/** POST /v1/tasks with the shell executor; the new task's id. */
async function createTask(t: Tenant, prompt: string): Promise<string> {
  const res = await call(theApi(), '/v1/tasks', {
    key: t.key,
    method: 'POST',
    body: { executor: 'shell', prompt },
  });
  if (res.status !== 201) throw new Error(`POST /v1/tasks: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** The Task as the kube-apiserver holds it. */
async function storedTask(t: Tenant, id: string): Promise<Task> {
  const task = await store.get(TaskType, t.namespace, id);
  if (task === undefined) throw new Error(`Task ${t.namespace}/${id} not found`);
  return task;
}

async function storedWebhook(t: Tenant): Promise<Webhook> {
  const webhook = await store.get(WebhookType, t.namespace, t.webhookId);
  if (webhook === undefined) throw new Error(`Webhook ${t.namespace}/${t.webhookId} not found`);
  return webhook;
}

const acceptedFor = (t: Tenant, taskId: string) => t.receiver.accepted().filter((d) => d.taskId === taskId);

describe('webhook deliveries of a task on a real kube-apiserver', () => {
  it(
    'delivers a verifiable task.created for a task created through the API, then empties the outbox',
    async () => {
      const taskId = await createTask(happy, 'echo hello');
      const [delivery] = await eventually(
        'task.created delivered',
        () => {
          const mine = acceptedFor(happy, taskId);
          return Promise.resolve(mine.length > 0 ? mine : undefined);
        },
        TEST_MS / 2,
      );
      if (delivery === undefined) throw new Error('no delivery');
      expect(delivery.event).toBe('task.created');
      expect(verifyDelivery(delivery.delivery, publicKeyPem)).toBe(true);
      expect(delivery.delivery.headers['webhook-id']).toBe(delivery.id);
      expect(delivery.delivery.headers['x-webhook-secret']).toBe(happy.secret);
      expect(delivery.body.data).toMatchObject({ id: taskId, status: 'running' });

      // The outbox is emptied once the delivery succeeded.
      const task = await eventually('outbox emptied', async () => {
        const current = await storedTask(happy, taskId);
        return (current.status?.outbox ?? []).length === 0 ? current : undefined;
      });
      expect(task.status?.outbox).toBeUndefined();
      // Its workspace never becomes ready here: KWOK runs no runner (and its disk is never bound).
      expect(task.status?.conditions?.find((c) => c.type === TaskConditions.WorkspaceReady)).toMatchObject({
        status: 'False',
      });
      expect(task.status?.status).toBe('running');

      const webhook = await eventually('webhook status written', async () => {
        const current = await storedWebhook(happy);
        return current.status?.lastTriggeredAt === undefined ? undefined : current;
      });
      expect(webhook.status?.failureCount ?? 0).toBe(0);
      expect(Date.parse(webhook.status?.lastTriggeredAt ?? '')).not.toBeNaN();
      // Only task.created: nothing else can happen to a task whose runner never answers.
      expect(acceptedFor(happy, taskId).map((d) => d.event)).toEqual(['task.created']);
    },
    TEST_MS,
  );

  it(
    'retries a refused delivery with the same webhook-id, keeping it in the outbox until it is accepted',
    async () => {
      flaky.receiver.respond = () => 503;
      const taskId = await createTask(flaky, 'echo retried');
      // While the receiver refuses, the entry stays in the Task's outbox with its failed attempts.
      const pending: OutboxEntry = await eventually(
        'a failed attempt recorded in the outbox',
        async () => {
          const entry = (await storedTask(flaky, taskId)).status?.outbox?.[0];
          return entry !== undefined && entry.attempts >= 1 ? entry : undefined;
        },
        TEST_MS / 3,
      );
      expect(pending).toMatchObject({ event: 'task.created', webhook: flaky.webhookId });
      expect(pending.lastError).toEqual(expect.stringContaining('503'));
      const refused = flaky.receiver.received.filter((d) => d.rawBody.includes(taskId));
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(refused.every((d) => d.answered === 503)).toBe(true);
      expect(refused.every((d) => d.headers['webhook-id'] === pending.id)).toBe(true);
      expect(acceptedFor(flaky, taskId)).toEqual([]);
      expect((await storedWebhook(flaky)).status?.failureCount ?? 0).toBeGreaterThanOrEqual(1);

      flaky.receiver.respond = () => 200;
      const [accepted] = await eventually(
        'the retry accepted',
        () => {
          const mine = acceptedFor(flaky, taskId);
          return Promise.resolve(mine.length > 0 ? mine : undefined);
        },
        TEST_MS / 3,
      );
      expect(accepted?.id).toBe(pending.id);
      expect(accepted?.event).toBe('task.created');
      if (accepted !== undefined) expect(verifyDelivery(accepted.delivery, publicKeyPem)).toBe(true);
      await eventually('outbox emptied after the success', async () =>
        (await storedTask(flaky, taskId)).status?.outbox === undefined ? true : undefined,
      );
      const webhook = await eventually('failure count reset', async () => {
        const current = await storedWebhook(flaky);
        return current.status?.failureCount === 0 ? current : undefined;
      });
      expect(webhook.status?.lastTriggeredAt).toBeDefined();
    },
    TEST_MS,
  );

  it(
    'keeps the signing keys in their Secret and the webhook secret out of Webhook and Task resources',
    async () => {
      const signingKeys = await store.get(SecretType, CONTROL_NAMESPACE, WEBHOOK_SIGNING_KEYS_SECRET);
      expect(signingKeys?.metadata.name).toBe(WEBHOOK_SIGNING_KEYS_SECRET);
      expect(Object.keys(signingKeys?.data ?? {}).length).toBeGreaterThan(0);

      for (const t of tenants) {
        const webhooks = (await store.list(WebhookType, { namespace: t.namespace })).items;
        const tasks = (await store.list(TaskType, { namespace: t.namespace })).items;
        expect(webhooks.map((w) => w.metadata.name)).toEqual([t.webhookId]);
        expect(tasks.length).toBeGreaterThan(0);
        // The secret went out with the deliveries, so it exists and is known to the operator...
        expect(t.receiver.received.some((d) => d.headers['x-webhook-secret'] === t.secret)).toBe(true);
        // ...but lives only in a Secret the Webhook refers to.
        expect(webhooks[0]?.spec.secretRef?.name).toEqual(expect.any(String));
        for (const resource of [...webhooks, ...tasks])
          expect(JSON.stringify(resource)).not.toContain(t.secret);
      }
    },
    TEST_MS,
  );
});
