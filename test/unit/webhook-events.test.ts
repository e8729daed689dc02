import { describe, expect, it } from '@jest/globals';
import type {
  PromptStatusEntry,
  Task,
  TaskStatusValue,
  Webhook,
  WebhookEventType,
} from '../../crds/index.js';
import { outboxEntriesFor, transitionEvents } from '../../operator/task/webhook-events.js';
import { taskFixture } from '../support/task-fixture.js';

const P1 = '00000000-0000-4000-8000-000000000001';
const P2 = '00000000-0000-4000-8000-000000000002';
const AT = '2026-11-22T10:00:00.000Z';

const task = (status: TaskStatusValue | undefined, entries: PromptStatusEntry[], prompts = [P1]): Task =>
  taskFixture({
    prompts: prompts.map((id) => ({ id })),
    ...(status === undefined ? {} : { status, entries }),
  });

const webhook = (name: string, events: WebhookEventType[], isActive?: boolean): Webhook => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Webhook',
  metadata: { name, namespace: 'n' },
  spec: { url: 'https://example.com/hook', events },
  ...(isActive === undefined ? {} : { status: { isActive } }),
});

describe('webhook events of a task status write', () => {
  it('says task.created on the first status write', () => {
    expect(transitionEvents(task(undefined, []), [{ id: P1, status: 'pending' }], 'running')).toEqual([
      'task.created',
    ]);
  });

  it('says task.running when a prompt starts', () => {
    const before = task('running', [{ id: P1, status: 'pending', dispatchedAt: AT }]);
    expect(transitionEvents(before, [{ id: P1, status: 'running', startedAt: AT }], 'running')).toEqual([
      'task.running',
    ]);
  });

  it('says task.running and task.completed when a prompt started and ended between two looks', () => {
    const before = task('running', [{ id: P1, status: 'pending', dispatchedAt: AT }]);
    const after: PromptStatusEntry[] = [{ id: P1, status: 'succeeded', startedAt: AT, completedAt: AT }];
    expect(transitionEvents(before, after, 'completed')).toEqual(['task.running', 'task.completed']);
  });

  it('says only task.canceled for a prompt canceled before it ever ran', () => {
    const before = task('running', [{ id: P1, status: 'pending' }]);
    expect(transitionEvents(before, [{ id: P1, status: 'canceled', completedAt: AT }], 'canceled')).toEqual([
      'task.canceled',
    ]);
  });

  it('says task.failed when the task leaves running failed', () => {
    const before = task('running', [{ id: P1, status: 'running', startedAt: AT }]);
    const after: PromptStatusEntry[] = [{ id: P1, status: 'failed', startedAt: AT, completedAt: AT }];
    expect(transitionEvents(before, after, 'failed')).toEqual(['task.failed']);
  });

  it('says task.running again when a follow-up prompt starts on a completed task', () => {
    const before = task('completed', [{ id: P1, status: 'succeeded', startedAt: AT }], [P1, P2]);
    const after: PromptStatusEntry[] = [
      { id: P1, status: 'succeeded', startedAt: AT },
      { id: P2, status: 'running', startedAt: AT },
    ];
    expect(transitionEvents(before, after, 'running')).toEqual(['task.running']);
  });

  it('says nothing when only the progress of a running prompt changed', () => {
    const before = task('running', [{ id: P1, status: 'running', startedAt: AT, lastSeq: 3 }]);
    expect(
      transitionEvents(before, [{ id: P1, status: 'running', startedAt: AT, lastSeq: 9 }], 'running'),
    ).toEqual([]);
  });
});

describe('outbox entries for the events', () => {
  it('owes one delivery per event and active subscribed webhook, each with its own id', () => {
    const entries = outboxEntriesFor(
      [
        webhook('a', ['task.created', 'task.completed']),
        webhook('b', ['task.completed']),
        webhook('c', ['task.completed'], false),
      ],
      ['task.created', 'task.completed'],
      new Date(AT),
    );
    expect(entries.map((e) => [e.webhook, e.event])).toEqual([
      ['a', 'task.created'],
      ['a', 'task.completed'],
      ['b', 'task.completed'],
    ]);
    expect(new Set(entries.map((e) => e.id)).size).toBe(3);
    expect(entries.every((e) => e.attempts === 0 && e.nextAttemptAt === AT)).toBe(true);
  });
});
