// Webhook delivery from the transactional outbox (operator/webhook), on an embedded store with a
// ControllerManager running only the `webhook-delivery` controller; every delivery lands on a real
// receiver on loopback that checks signatures with Node's crypto (see webhook-delivery-support.ts).
// This file: what one delivery carries, and the metrics it counts.
import { verifyDelivery } from '../support/webhook-receiver.js';
import { describe, expect, it } from '@jest/globals';
import { AGENTRY_VERSION } from '../../platform/version.js';
import {
  createTask,
  createWebhook,
  entry,
  getTask,
  getWebhook,
  outboxEmpty,
  PUBLIC_URL,
  receiver,
  signingPublicKeyPem,
  startDelivery,
  useDeliveryHarness,
  waitFor,
} from './webhook-delivery-support.js';

useDeliveryHarness();

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
    expect(verifyDelivery(request, signingPublicKeyPem())).toBe(true);
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
    expect(verifyDelivery(request, signingPublicKeyPem())).toBe(true);
    const tampered = { ...request, rawBody: request.rawBody.replace('"taskId":"t1"', '"taskId":"t2"') };
    expect(tampered.rawBody).not.toBe(request.rawBody);
    expect(verifyDelivery(tampered, signingPublicKeyPem())).toBe(false);
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
