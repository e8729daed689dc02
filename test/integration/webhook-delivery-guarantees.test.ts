// Webhook delivery from the transactional outbox (operator/webhook), on an embedded store with a
// ControllerManager running only the `webhook-delivery` controller; every delivery lands on a real
// receiver on loopback that checks signatures with Node's crypto (see webhook-delivery-support.ts).
// This file: at-least-once delivery, ordering, and isolation of slow targets.
import { verifyDelivery } from '../support/webhook-receiver.js';
import { describe, expect, it } from '@jest/globals';
import {
  appendOutbox,
  createTask,
  createWebhook,
  entry,
  outboxEmpty,
  outboxOf,
  receiver,
  signingPublicKeyPem,
  startDelivery,
  useDeliveryHarness,
  waitFor,
} from './webhook-delivery-support.js';

useDeliveryHarness();

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
    expect(target.received.every((request) => verifyDelivery(request, signingPublicKeyPem()))).toBe(true);
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
