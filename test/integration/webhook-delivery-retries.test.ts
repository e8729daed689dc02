// Webhook delivery from the transactional outbox (operator/webhook), on an embedded store with a
// ControllerManager running only the `webhook-delivery` controller; every delivery lands on a real
// receiver on loopback that checks signatures with Node's crypto (see webhook-delivery-support.ts).
// This file: retries, Retry-After, redirects and timeouts.
import { verifyDelivery } from '../support/webhook-receiver.js';
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createTask,
  createWebhook,
  entry,
  FAST_SCHEDULE,
  getWebhook,
  outboxEmpty,
  outboxOf,
  receiver,
  signingPublicKeyPem,
  startDelivery,
  useDeliveryHarness,
  waitFor,
} from './webhook-delivery-support.js';

useDeliveryHarness();

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
    expect(target.received.every((request) => verifyDelivery(request, signingPublicKeyPem()))).toBe(true);
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
