// Webhook delivery from the transactional outbox (operator/webhook), on an embedded store with a
// ControllerManager running only the `webhook-delivery` controller; every delivery lands on a real
// receiver on loopback that checks signatures with Node's crypto (see webhook-delivery-support.ts).
// This file: webhooks and targets that are gone, and the target policy at delivery time.
import { describe, expect, it } from '@jest/globals';
import { OrganizationType } from '../../crds/index.js';
import {
  createOrganization,
  createTask,
  createWebhook,
  deliveryStore,
  entry,
  getWebhook,
  outboxEmpty,
  outboxOf,
  receiver,
  startDelivery,
  useDeliveryHarness,
  waitFor,
} from './webhook-delivery-support.js';

useDeliveryHarness();

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
    await deliveryStore().delete(OrganizationType, undefined, 'acme');
    await createOrganization(true);
    const target = await receiver();
    await createWebhook('wh', target.url);
    await startDelivery({ allowPrivateTargets: false });
    await createTask('t1', [entry('wh', 'task.completed')]);
    await waitFor('an empty outbox', outboxEmpty('t1'));
    expect(target.received).toHaveLength(1);
  });
});
