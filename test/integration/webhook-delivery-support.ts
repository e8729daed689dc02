// What the webhook delivery tests share: an embedded store with the organization, the
// `webhook-delivery` controller started on demand, and the Webhooks and Tasks (with their outbox)
// the API and the Task reconciler would write, which the tests play instead.
import { afterEach, beforeEach } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import {
  OrganizationSpecSchema,
  OrganizationType,
  SecretType,
  TaskType,
  WebhookType,
  apiVersionOf,
  secretData,
} from '../../crds/index.js';
import type { OutboxEntry, Task, TaskStatus, Webhook, WebhookEventType } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/index.js';
import { addWebhookDeliveryController } from '../../operator/webhook/controller.js';
import type { WebhookDeliveryControllerDeps } from '../../operator/webhook/controller.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { WebhookSigningKeys } from '../../platform/webhook-signing.js';
import { Receiver } from './webhook-delivery-receiver.js';

export const CONTROL = 'agentry-system';
export const NS = 'agentry-org-acme';
export const PUBLIC_URL = 'https://agentry.example';
/** Short steps instead of Standard Webhooks' hours. */
export const FAST_SCHEDULE = [200, 200, 200, 200];

let dir: string;
let store: EmbeddedStore;
let publicKeyPem: string;
const managers: ControllerManager[] = [];
const receivers: Receiver[] = [];

/** The store of the running test. */
export const deliveryStore = (): EmbeddedStore => store;
/** The PEM of the installation's published webhook signing key. */
export const signingPublicKeyPem = (): string => publicKeyPem;

/** A fresh store with the organization before each test; stops what the test started after it. */
export function useDeliveryHarness(): void {
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentry-webhook-delivery-'));
    store = await EmbeddedStore.open(dir);
    publicKeyPem = (await WebhookSigningKeys.load(store, CONTROL)).publicKeyDocument().publicKeyPem;
    await createOrganization(false);
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.stop()));
    await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }, 30_000);
}

export async function createOrganization(allowPrivateWebhookTargets: boolean): Promise<void> {
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: 'acme' },
    spec: OrganizationSpecSchema.parse({ displayName: 'Acme', allowPrivateWebhookTargets }),
  });
}

export async function receiver(): Promise<Receiver> {
  const started = await new Receiver().start();
  receivers.push(started);
  return started;
}

export async function startDelivery(
  options: Partial<WebhookDeliveryControllerDeps> = {},
): Promise<{ manager: ControllerManager; registry: Registry }> {
  const registry = new Registry();
  const logger = createLogger({ level: 'silent' });
  const manager = new ControllerManager({ store, logger, registry, gracePeriodMs: 0 });
  addWebhookDeliveryController(manager, {
    store,
    logger,
    registry,
    controlNamespace: CONTROL,
    installationKey: new InstallationKey(Buffer.alloc(32, 7)),
    publicUrl: PUBLIC_URL,
    allowPrivateTargets: true,
    retrySchedule: FAST_SCHEDULE,
    ...options,
  });
  await manager.start();
  managers.push(manager);
  return { manager, registry };
}

export async function createWebhook(name: string, url: string, secret?: string): Promise<void> {
  if (secret !== undefined) {
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-secret`, namespace: NS },
      data: secretData({ secret }),
    });
  }
  await store.create(WebhookType, {
    apiVersion: apiVersionOf(WebhookType),
    kind: 'Webhook',
    metadata: { name, namespace: NS },
    spec: {
      url,
      events: ['task.created', 'task.running', 'task.completed', 'task.failed', 'task.canceled'],
      ...(secret === undefined ? {} : { secretRef: { name: `${name}-secret` } }),
    },
  });
}

export function entry(
  webhook: string,
  event: WebhookEventType,
  extra: Partial<OutboxEntry> = {},
): OutboxEntry {
  const now = new Date().toISOString();
  return { id: randomUUID(), webhook, event, occurredAt: now, attempts: 0, nextAttemptAt: now, ...extra };
}

export const PROMPT_ID = '11111111-2222-4333-8444-555555555555';

/** A completed task with `outbox` written into its status, as the Task reconciler does with a transition. */
export async function createTask(name: string, outbox: readonly OutboxEntry[]): Promise<void> {
  const created = await store.create(TaskType, {
    apiVersion: apiVersionOf(TaskType),
    kind: 'Task',
    metadata: { name, namespace: NS },
    spec: {
      workspace: 'ws-1',
      executor: 'shell',
      title: 'Say hi',
      owner: 'ann',
      visibility: 'shared',
      prompts: [{ id: PROMPT_ID, text: 'echo hi', submittedAt: '2025-01-01T00:00:00.000Z' }],
    },
  });
  const status: TaskStatus = {
    status: 'completed',
    completedAt: '2025-01-01T00:00:05.000Z',
    prompts: [
      {
        id: PROMPT_ID,
        status: 'succeeded',
        startedAt: '2025-01-01T00:00:01.000Z',
        completedAt: '2025-01-01T00:00:05.000Z',
        finalResult: 'hi',
      },
    ],
    outbox: [...outbox],
  };
  await store.replaceStatus(TaskType, { ...created, status });
}

/** Adds entries to a task's outbox the way the Task reconciler does: at the version read, retried on conflict. */
export async function appendOutbox(name: string, entries: OutboxEntry[]): Promise<void> {
  for (;;) {
    const task = await getTask(name);
    const status = { ...task.status, outbox: [...(task.status?.outbox ?? []), ...entries] };
    try {
      await store.replaceStatus(
        TaskType,
        { ...task, status },
        { resourceVersion: task.metadata.resourceVersion },
      );
      return;
    } catch (err) {
      if ((err as { reason?: string }).reason !== 'Conflict') throw err;
    }
  }
}

export async function getTask(name: string): Promise<Task> {
  const task = await store.get(TaskType, NS, name);
  if (task === undefined) throw new Error(`task ${name} is gone`);
  return task;
}

export async function getWebhook(name: string): Promise<Webhook> {
  const webhook = await store.get(WebhookType, NS, name);
  if (webhook === undefined) throw new Error(`webhook ${name} is gone`);
  return webhook;
}

export const outboxOf = async (name: string): Promise<OutboxEntry[]> =>
  (await getTask(name)).status?.outbox ?? [];

export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const outboxEmpty = (task: string) => async (): Promise<boolean> =>
  (await outboxOf(task)).length === 0;
