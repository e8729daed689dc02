// Webhook delivery from the transactional outbox (operator/webhook), on an embedded store with a
// ControllerManager running only the `webhook-delivery` controller. The Task reconciler's part,
// writing outbox entries into Task status, is played by the test. Every delivery lands on a real
// receiver (node:http on loopback) that checks signatures with Node's crypto and the published PEM,
// never with Agentry's signing code.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createPublicKey, randomUUID, verify } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
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
import { AGENTRY_VERSION } from '../../platform/version.js';
import { WebhookSigningKeys } from '../../platform/webhook-signing.js';

const CONTROL = 'agentry-system';
const NS = 'agentry-org-acme';
const PUBLIC_URL = 'https://agentry.example';
/** Short steps instead of Standard Webhooks' hours. */
const FAST_SCHEDULE = [200, 200, 200, 200];

// ---------------------------------------------------------------------------------------------
// A receiver as a client would run one.

interface Received {
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Date.now() when the request arrived. */
  at: number;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer this much later (0: at once); a request the client drops meanwhile is never answered. */
  delayMs?: number;
}

class Receiver {
  readonly received: Received[] = [];
  answer: (request: Received, index: number) => Answer = () => ({ status: 200 });
  private server: Server | undefined;
  private port = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Starts on the port it had before, if any: the registered URL stays valid across a stop. */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          headers: req.headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(request);
        const answer = this.answer(request, this.received.length - 1);
        const send = (): void => {
          if (!res.destroyed) res.writeHead(answer.status, answer.headers).end('{"ok":true}');
        };
        if ((answer.delayMs ?? 0) === 0) {
          send();
          return;
        }
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          send();
        }, answer.delayMs);
        this.timers.add(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address !== null && typeof address === 'object') this.port = address.port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  ids(): string[] {
    return this.received.map((request) => String(request.headers['webhook-id']));
  }
}

/** Standard Webhooks' asymmetric check, with Node's crypto only: any `v1a,` signature verifies. */
function verifies(request: { headers: IncomingHttpHeaders; rawBody: string }, publicKeyPem: string): boolean {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signature = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const key = createPublicKey(publicKeyPem);
  const signed = Buffer.from(`${id}.${timestamp}.${request.rawBody}`);
  return signature
    .split(' ')
    .filter((part) => part.startsWith('v1a,'))
    .some((part) => verify(null, signed, key, Buffer.from(part.slice(4), 'base64')));
}

// ---------------------------------------------------------------------------------------------
// The store, the controller, and the resources the API and the Task reconciler would write.

let dir: string;
let store: EmbeddedStore;
let publicKeyPem: string;
const managers: ControllerManager[] = [];
const receivers: Receiver[] = [];

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

async function createOrganization(allowPrivateWebhookTargets: boolean): Promise<void> {
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: 'acme' },
    spec: OrganizationSpecSchema.parse({ displayName: 'Acme', allowPrivateWebhookTargets }),
  });
}

async function receiver(): Promise<Receiver> {
  const started = await new Receiver().start();
  receivers.push(started);
  return started;
}

async function startDelivery(
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

async function createWebhook(name: string, url: string, secret?: string): Promise<void> {
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

function entry(webhook: string, event: WebhookEventType, extra: Partial<OutboxEntry> = {}): OutboxEntry {
  const now = new Date().toISOString();
  return { id: randomUUID(), webhook, event, occurredAt: now, attempts: 0, nextAttemptAt: now, ...extra };
}

const PROMPT_ID = '11111111-2222-4333-8444-555555555555';

/** A completed task with `outbox` written into its status, as the Task reconciler does with a transition. */
async function createTask(name: string, outbox: readonly OutboxEntry[]): Promise<void> {
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
async function appendOutbox(name: string, entries: OutboxEntry[]): Promise<void> {
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

async function getTask(name: string): Promise<Task> {
  const task = await store.get(TaskType, NS, name);
  if (task === undefined) throw new Error(`task ${name} is gone`);
  return task;
}

async function getWebhook(name: string): Promise<Webhook> {
  const webhook = await store.get(WebhookType, NS, name);
  if (webhook === undefined) throw new Error(`webhook ${name} is gone`);
  return webhook;
}

const outboxOf = async (name: string): Promise<OutboxEntry[]> => (await getTask(name)).status?.outbox ?? [];

async function waitFor(
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

const outboxEmpty = (task: string) => async (): Promise<boolean> => (await outboxOf(task)).length === 0;

// ---------------------------------------------------------------------------------------------

describe('a delivery', () => {
  it('carries the Standard Webhooks headers, and a signature the published key verifies', async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    const due = entry('wh', 'task.completed');
    await createTask('t1', [due]);
    await waitFor('the delivery', () => target.received.length === 1);
    const [request] = target.received;
    if (request === undefined) throw new Error('nothing arrived');
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': `Agentry-Webhooks/${AGENTRY_VERSION}`,
      'webhook-id': due.id,
    });
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/=]+$/);
    expect(request.headers).not.toHaveProperty('x-webhook-secret');
    expect(verifies(request, publicKeyPem)).toBe(true);
  });

  it('has the body of docs/api.md#webhooks: id, type, event, timestamp, taskId and the record without prompts', async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    const due = entry('wh', 'task.completed', { occurredAt: '2025-01-01T00:00:05Z' });
    await createTask('t1', [due]);
    await waitFor('the delivery', () => target.received.length === 1);
    const body = JSON.parse(target.received[0]?.rawBody ?? '{}') as Record<string, unknown>;
    expect(body).toEqual({
      id: due.id,
      type: 'task.completed',
      event: 'task.completed',
      timestamp: '2025-01-01T00:00:05.000Z',
      taskId: 't1',
      data: expect.objectContaining({
        id: 't1',
        url: `${PUBLIC_URL}/v1/tasks/t1`,
        status: 'completed',
        finalResult: 'hi',
        executor: 'shell',
      }),
    });
    expect(body.data).not.toHaveProperty('prompts');
  });

  it("reports the event's status, not the task's: task.created reads running", async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    await createTask('t1', [entry('wh', 'task.created')]);
    await waitFor('the delivery', () => target.received.length === 1);
    const body = JSON.parse(target.received[0]?.rawBody ?? '{}') as { data: Record<string, unknown> };
    expect(body.data).toMatchObject({ status: 'running', completedAt: null });
  });

  it("sends X-Webhook-Secret from the webhook's Secret", async () => {
    const target = await receiver();
    await createWebhook('wh', target.url, 'shh-its-a-secret');
    await startDelivery();
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('the delivery', () => target.received.length === 1);
    expect(target.received[0]?.headers['x-webhook-secret']).toBe('shh-its-a-secret');
  });

  it('removes the entry and records the success on the webhook', async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    const webhook = await getWebhook('wh');
    expect(webhook.status).toMatchObject({ failureCount: 0 });
    expect(webhook.status?.lastTriggeredAt).toBeDefined();
    expect((await getTask('t1')).status).toMatchObject({
      status: 'completed',
      prompts: [{ finalResult: 'hi' }],
    });
  });

  it("fails the receiver's verification once the body is changed by one byte", async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('the delivery', () => target.received.length === 1);
    const request = target.received[0];
    if (request === undefined) throw new Error('nothing arrived');
    expect(verifies(request, publicKeyPem)).toBe(true);
    const tampered = { ...request, rawBody: request.rawBody.replace('"taskId":"t1"', '"taskId":"t2"') };
    expect(tampered.rawBody).not.toBe(request.rawBody);
    expect(verifies(tampered, publicKeyPem)).toBe(false);
  });

  it('waits until its nextAttemptAt', async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    const at = Date.now() + 1_500;
    await createTask('t1', [entry('wh', 'task.completed', { nextAttemptAt: new Date(at).toISOString() })]);
    await waitFor('the delivery', () => target.received.length === 1);
    expect(target.received[0]?.at).toBeGreaterThanOrEqual(at - 5);
  });
});

describe('retries', () => {
  it('delivers after a few 500s, with the same webhook-id every time, then resets failureCount', async () => {
    const target = await receiver();
    target.answer = (_request, index) => ({ status: index < 3 ? 500 : 200 });
    await createWebhook('wh', target.url);
    await startDelivery();
    const due = entry('wh', 'task.completed');
    await createTask('t1', [due]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.ids()).toEqual([due.id, due.id, due.id, due.id]);
    expect(target.received.every((request) => verifies(request, publicKeyPem))).toBe(true);
    expect((await getWebhook('wh')).status).toMatchObject({ failureCount: 0 });
    expect((await getWebhook('wh')).status?.lastError).toBeUndefined();
  });

  it('records attempts, next attempt time and the error on a failing entry, and counts each failed attempt', async () => {
    const target = await receiver();
    target.answer = () => ({ status: 503 });
    await createWebhook('wh', target.url);
    await startDelivery({ retrySchedule: [100, 60_000] });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('two attempts', async () => (await outboxOf('t1'))[0]?.attempts === 2);
    const [pending] = await outboxOf('t1');
    expect(pending?.lastError).toBe('the target answered HTTP 503');
    expect(Date.parse(pending?.nextAttemptAt ?? '')).toBeGreaterThan(Date.now() + 30_000);
    await waitFor('the webhook status', async () => (await getWebhook('wh')).status?.failureCount === 2);
    expect((await getWebhook('wh')).status?.lastError).toBe('the target answered HTTP 503');
  });

  it('gives up after the last scheduled attempt: the entry leaves the outbox', async () => {
    const target = await receiver();
    target.answer = () => ({ status: 500 });
    await createWebhook('wh', target.url);
    await startDelivery();
    await createTask('t1', [entry('wh', 'task.failed')]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.received).toHaveLength(FAST_SCHEDULE.length + 1);
    await waitFor('the webhook status', async () => (await getWebhook('wh')).status?.failureCount === 5);
    await sleep(500);
    expect(target.received).toHaveLength(FAST_SCHEDULE.length + 1);
  });

  it('honours Retry-After: the next attempt waits at least that long', async () => {
    const target = await receiver();
    target.answer = (_request, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 };
    await createWebhook('wh', target.url);
    // Without Retry-After the next attempt would follow after 100 ms (±20%).
    await startDelivery({ retrySchedule: [100, 5_000] });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('two attempts', () => target.received.length === 2);
    const [first, second] = target.received;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const elsewhere = await receiver();
    const target = await receiver();
    target.answer = () => ({ status: 307, headers: { location: elsewhere.url } });
    await createWebhook('wh', target.url);
    await startDelivery({ retrySchedule: [100, 60_000] });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('two attempts', async () => (await outboxOf('t1'))[0]?.attempts === 2);
    expect((await outboxOf('t1'))[0]?.lastError).toBe(
      'the target answered HTTP 307 (redirects are not followed)',
    );
    expect(elsewhere.received).toHaveLength(0);
  });

  it('times out a receiver that does not answer in time, as a failure', async () => {
    const target = await receiver();
    target.answer = () => ({ status: 200, delayMs: 10_000 });
    await createWebhook('wh', target.url);
    await startDelivery({ attemptTimeoutMs: 500, retrySchedule: [60_000] });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('a failed attempt', async () => (await outboxOf('t1'))[0]?.attempts === 1);
    expect((await outboxOf('t1'))[0]?.lastError).toBe('no answer within 500ms');
  });
});

describe('at least once', () => {
  it('delivers everything once a receiver that was down is back, none lost', async () => {
    const target = await receiver();
    await target.stop();
    await createWebhook('wh', target.url);
    await startDelivery({ retrySchedule: [200, 200, 500, 1_000, 1_000, 2_000, 5_000] });
    const entries = ['t1', 't2', 't3'].map(
      (task) =>
        [
          task,
          [entry('wh', 'task.created'), entry('wh', 'task.running'), entry('wh', 'task.completed')],
        ] as const,
    );
    for (const [task, outbox] of entries) await createTask(task, outbox);
    await waitFor('failed attempts', async () => (await outboxOf('t3')).every((e) => e.attempts >= 2));
    expect((await outboxOf('t1'))[0]?.lastError).toContain('ECONNREFUSED');
    await target.start();
    for (const [task] of entries) await waitFor(`the outbox of ${task} to empty`, outboxEmpty(task));
    const expected = entries.flatMap(([, outbox]) => outbox.map((e) => e.id));
    expect(new Set(target.ids())).toEqual(new Set(expected));
    expect(target.received.every((request) => verifies(request, publicKeyPem))).toBe(true);
  });

  it("delivers one task's events to a webhook in the order they occurred, pulling a waiting retry forward", async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery();
    const now = Date.now();
    const at = (ms: number): string => new Date(now + ms).toISOString();
    // task.created failed before and waits for its retry; task.running, newer, falls due first.
    const created = entry('wh', 'task.created', {
      occurredAt: at(-1_000),
      attempts: 2,
      nextAttemptAt: at(60_000),
    });
    const running = entry('wh', 'task.running', { occurredAt: at(-500), nextAttemptAt: at(300) });
    await createTask('t1', [running, created]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.ids()).toEqual([created.id, running.id]);
  });

  it('keeps an entry the Task reconciler adds while a delivery is in flight', async () => {
    const target = await receiver();
    target.answer = (_request, index) => ({ status: 200, delayMs: index === 0 ? 1_000 : 0 });
    await createWebhook('wh', target.url);
    await startDelivery();
    const first = entry('wh', 'task.running');
    await createTask('t1', [first]);
    await waitFor('the first delivery to start', () => target.received.length === 1);
    const added = entry('wh', 'task.completed');
    await appendOutbox('t1', [added]);
    await waitFor('both deliveries', () => target.received.length === 2);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.ids()).toEqual([first.id, added.id]);
  });

  it('delivers again, with the same webhook-id, a delivery cut off by a crash', async () => {
    const target = await receiver();
    target.answer = (_request, index) => ({ status: 200, delayMs: index === 0 ? 30_000 : 0 });
    await createWebhook('wh', target.url);
    const crashing = await startDelivery();
    const due = entry('wh', 'task.completed');
    await createTask('t1', [due]);
    await waitFor('the delivery to start', () => target.received.length === 1);
    await crashing.manager.kill();
    expect((await outboxOf('t1')).map((e) => e.id)).toEqual([due.id]);
    await startDelivery();
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.ids()).toEqual([due.id, due.id]);
  });
});

describe('isolation of slow targets', () => {
  it("does not let one webhook's slow target delay another webhook's delivery", async () => {
    const slow = await receiver();
    slow.answer = () => ({ status: 200, delayMs: 4_000 });
    const fast = await receiver();
    await createWebhook('slow', slow.url);
    await createWebhook('fast', fast.url);
    await startDelivery({ attemptTimeoutMs: 10_000 });
    await createTask('t1', [entry('slow', 'task.completed'), entry('fast', 'task.completed')]);
    await waitFor('both deliveries', () => slow.received.length === 1 && fast.received.length === 1);
    expect((fast.received[0]?.at ?? Infinity) - (slow.received[0]?.at ?? 0)).toBeLessThan(2_000);
  });

  it('keeps delivering to other webhooks while many tasks wait on one slow target', async () => {
    const slow = await receiver();
    slow.answer = () => ({ status: 200, delayMs: 5_000 });
    const fast = await receiver();
    await createWebhook('slow', slow.url);
    await createWebhook('fast', fast.url);
    await startDelivery({ attemptTimeoutMs: 10_000, workers: 8 });
    for (let i = 0; i < 12; i++) await createTask(`slow-${i}`, [entry('slow', 'task.completed')]);
    await waitFor('the slow target to be busy', () => slow.received.length >= 1);
    const started = Date.now();
    await createTask('fast-1', [entry('fast', 'task.completed')]);
    await waitFor('the fast delivery', () => fast.received.length === 1);
    expect((fast.received[0]?.at ?? Infinity) - started).toBeLessThan(2_500);
  });
});

describe('webhooks that are gone', () => {
  it('disables a webhook whose target answers 410 and drops its entries in every task', async () => {
    const target = await receiver();
    target.answer = () => ({ status: 410 });
    await createWebhook('wh', target.url);
    await startDelivery();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await createTask('t1', [
      entry('wh', 'task.completed'),
      entry('wh', 'task.failed', { nextAttemptAt: later }),
    ]);
    await createTask('t2', [entry('wh', 'task.completed', { nextAttemptAt: later })]);
    await waitFor('an empty outbox of t1', outboxEmpty('t1'));
    await waitFor('an empty outbox of t2', outboxEmpty('t2'));
    expect(target.received).toHaveLength(1);
    expect((await getWebhook('wh')).status).toMatchObject({ isActive: false });
  });

  it('drops, without an attempt, the entries of a webhook that no longer exists', async () => {
    const target = await receiver();
    await createWebhook('present', target.url);
    await startDelivery();
    const kept = entry('present', 'task.completed');
    await createTask('t1', [entry('deleted', 'task.completed'), kept]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.ids()).toEqual([kept.id]);
  });
});

describe('target policy at delivery', () => {
  it('refuses a loopback target when private targets are not allowed, with a clear lastError', async () => {
    const target = await receiver();
    const url = target.url.replace('http://', 'https://');
    await createWebhook('wh', url);
    await startDelivery({ allowPrivateTargets: false, retrySchedule: [60_000] });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('a failed attempt', async () => (await outboxOf('t1'))[0]?.attempts === 1);
    expect((await outboxOf('t1'))[0]?.lastError).toBe(
      'webhook target 127.0.0.1 is a loopback address; webhooks may reach only public addresses unless private targets are allowed',
    );
    expect(target.received).toHaveLength(0);
  });

  it('delivers to a private target when the organization allows it', async () => {
    await store.delete(OrganizationType, undefined, 'acme');
    await createOrganization(true);
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery({ allowPrivateTargets: false });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.received).toHaveLength(1);
  });
});

describe('metrics', () => {
  it('counts deliveries by event and outcome, and reports the outbox depth', async () => {
    const target = await receiver();
    await createWebhook('wh', target.url);
    const { registry } = await startDelivery();
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await createTask('t2', [entry('wh', 'task.failed', { nextAttemptAt: later })]);
    await waitFor('the cache to see t2', async () => {
      const depth = await registry.getSingleMetric('agentry_webhook_outbox_depth')?.get();
      return depth?.values[0]?.value === 1;
    });
    const deliveries = await registry.getSingleMetric('agentry_webhook_deliveries_total')?.get();
    expect(deliveries?.values).toEqual([
      expect.objectContaining({ labels: { event: 'task.completed', outcome: 'success' }, value: 1 }),
    ]);
  });
});
