// Webhooks end to end on the embedded default: tasks run by real runners (shell executor), the
// operator writes the outbox and delivers, a real receiver on loopback verifies every delivery with
// Node's crypto and the PEM served by GET /v1/webhooks/public_key (never with our signing code).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';
import { WebhookReceiver, verifyDelivery } from '../support/webhook-receiver.js';

const ALL_EVENTS = ['task.created', 'task.running', 'task.completed', 'task.failed', 'task.canceled'];
let stack: EmbeddedStack;
let api: TestApi;
let key: string;
let publicKeyPem: string;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  stack = await startEmbeddedStack({
    prefix: 'agentry-webhooks-e2e-',
    // Short steps instead of Standard Webhooks' hours, so "down for a while" fits in a test.
    webhooks: {
      publicUrl: 'http://agentry.test',
      allowPrivateTargets: true,
      retrySchedule: [300, 300, 500, 500, 1000],
    },
  });
  api = stack.api;
  key = await api.key({ org: 'acme' });
  await receiver.start();
  const registered = await call(api, '/v1/webhooks', {
    key,
    method: 'POST',
    body: { url: receiver.url, events: ALL_EVENTS, secret: 'shared-secret-value' },
  });
  expect(registered.status).toBe(201);
  const document = await call(api, '/v1/webhooks/public_key', { key });
  publicKeyPem = ((await document.json()) as { publicKeyPem: string }).publicKeyPem;
}, 60_000);

beforeEach(() => {
  receiver.respond = () => 200;
});

afterAll(async () => {
  await receiver.stop();
  await stack.stop();
}, 90_000);

async function createTask(prompt: string): Promise<string> {
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body: { executor: 'shell', prompt } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function eventsFor(taskId: string, count: number, timeoutMs = 60_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mine = receiver.accepted().filter((d) => d.taskId === taskId);
    if (mine.length >= count) return mine.map((d) => d.event);
    if (Date.now() > deadline)
      throw new Error(`only ${JSON.stringify(mine.map((d) => d.event))} arrived for ${taskId}`);
    await sleep(100);
  }
}

describe('webhook deliveries of task transitions', () => {
  it('delivers created, running and completed for a task that runs and completes, each verifiable', async () => {
    const taskId = await createTask('echo hi');
    expect(await eventsFor(taskId, 3)).toEqual(['task.created', 'task.running', 'task.completed']);
    const mine = receiver.accepted().filter((d) => d.taskId === taskId);
    for (const { delivery, body } of mine) {
      expect(verifyDelivery(delivery, publicKeyPem)).toBe(true);
      expect(delivery.headers['x-webhook-secret']).toBe('shared-secret-value');
      expect(body.type).toBe(body.event);
      expect(delivery.headers['webhook-id']).toBe(body.id);
    }
    const completed = mine.find((d) => d.event === 'task.completed')?.body.data as Record<string, unknown>;
    expect(completed).toMatchObject({ id: taskId, status: 'completed', finalResult: 'hi' });
    expect(completed).not.toHaveProperty('prompts');
  });

  it('delivers task.failed for a task whose command fails', async () => {
    const taskId = await createTask('exit 4');
    expect(await eventsFor(taskId, 3)).toEqual(['task.created', 'task.running', 'task.failed']);
  });

  it('delivers task.canceled for a task canceled while it runs', async () => {
    const taskId = await createTask('sleep 600');
    await eventsFor(taskId, 2);
    expect((await call(api, `/v1/tasks/${taskId}/cancel`, { key, method: 'POST' })).status).toBe(200);
    expect(await eventsFor(taskId, 3)).toEqual(['task.created', 'task.running', 'task.canceled']);
  });

  it('fails verification of a delivery whose body was changed by one byte', async () => {
    const taskId = await createTask('echo tamper');
    await eventsFor(taskId, 3);
    const { delivery } = receiver.accepted().filter((d) => d.taskId === taskId)[0] ?? { delivery: undefined };
    if (delivery === undefined) throw new Error('no delivery');
    const tampered = { ...delivery, rawBody: delivery.rawBody.replace('task.', 'task,') };
    expect(verifyDelivery(tampered, publicKeyPem)).toBe(false);
  });
});

describe('a receiver that is down for a while', () => {
  it('gets every delivery once it is back, retries carrying the same webhook-id', async () => {
    // Down until each of this task's deliveries has been refused once: a fixed down time would let a
    // slow machine spend the test's short retry schedule before the task even finished.
    const refused = new Set<string>();
    let taskId = ''; // empty until the POST answers: task.created may be attempted before that
    receiver.respond = (delivery) => {
      const id = String(delivery.headers['webhook-id']);
      if (!delivery.rawBody.includes(taskId) || refused.has(id)) return 200;
      refused.add(id);
      return 503;
    };
    taskId = await createTask('echo while-down');
    const stream = await readTaskStream(`${api.url}/v1/tasks/${taskId}/events`, { key, timeoutMs: 60_000 });
    expect(stream.done?.status).toBe('completed');
    expect(await eventsFor(taskId, 3)).toEqual(['task.created', 'task.running', 'task.completed']);
    const attempts = receiver.received.filter((d) => d.rawBody.includes(taskId));
    const failedIds = new Set(attempts.filter((d) => d.answered === 503).map((d) => d.headers['webhook-id']));
    const acceptedIds = new Set(
      receiver
        .accepted()
        .filter((d) => d.taskId === taskId)
        .map((d) => d.id),
    );
    expect(failedIds.size).toBe(3);
    for (const id of failedIds) expect(acceptedIds.has(String(id))).toBe(true);
  });
});
