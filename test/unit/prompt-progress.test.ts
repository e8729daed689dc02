import { describe, expect, it } from '@jest/globals';
import type { PromptStatusEntry, Task } from '../../crds/index.js';
import {
  budgetFailedEntry,
  computeTaskStatus,
  endedEntry,
  entriesOf,
  withRunnerState,
} from '../../operator/task/prompt-progress.js';
import type { PromptState } from '../../platform/runner-protocol.js';
import { taskFixture } from '../support/task-fixture.js';

const P1 = '00000000-0000-4000-8000-000000000001';
const P2 = '00000000-0000-4000-8000-000000000002';
const NOW = new Date('2026-11-22T10:00:00.000Z');

const state = (overrides: Partial<PromptState>): PromptState => ({
  taskId: 't',
  promptId: P1,
  status: 'running',
  acceptedAt: '2026-11-22T09:59:00.000Z',
  lastSeq: 3,
  ...overrides,
});

const task = (entries?: PromptStatusEntry[]): Task =>
  taskFixture({
    generation: 2,
    prompts: [
      { id: P1, submittedAt: '2026-11-22T09:58:00.000Z' },
      { id: P2, submittedAt: '2026-11-22T09:59:00.000Z' },
    ],
    ...(entries === undefined ? {} : { entries }),
  });

describe('prompt progress recorded from the runner', () => {
  it('takes the runner state of a prompt in flight, with its final answer', () => {
    const next = withRunnerState(
      { id: P1, status: 'running', dispatchedAt: NOW.toISOString() },
      state({ status: 'succeeded', lastSeq: 9, finalResult: '42', completedAt: NOW.toISOString() }),
    );
    expect(next).toMatchObject({
      status: 'succeeded',
      lastSeq: 9,
      finalResult: '42',
      dispatchedAt: NOW.toISOString(),
    });
  });

  it('never moves a recorded final prompt backwards', () => {
    const done: PromptStatusEntry = { id: P1, status: 'canceled', lastSeq: 5 };
    expect(withRunnerState(done, state({ status: 'running', lastSeq: 7 }))).toBe(done);
  });

  it('never lowers the recorded last seq', () => {
    expect(withRunnerState({ id: P1, status: 'running', lastSeq: 8 }, state({ lastSeq: 3 })).lastSeq).toBe(8);
  });

  it('keeps only the end of an oversized final answer, within the Task status limit', () => {
    const huge = 'x'.repeat(150_000) + 'END';
    const next = withRunnerState(
      { id: P1, status: 'running' },
      state({ status: 'succeeded', finalResult: huge }),
    );
    expect(next.finalResult?.length).toBe(100_000);
    expect(next.finalResult?.endsWith('END')).toBe(true);
  });

  it('ends a prompt without the runner with a time and a reason', () => {
    expect(endedEntry({ id: P1, status: 'pending' }, 'failed', NOW, 'workspace gone')).toEqual({
      id: P1,
      status: 'failed',
      completedAt: NOW.toISOString(),
      error: 'workspace gone',
    });
  });

  it('lists a pending entry for every prompt the operator has not seen, in spec order', () => {
    expect(entriesOf(task([{ id: P2, status: 'running' }])).map((e) => [e.id, e.status])).toEqual([
      [P1, 'pending'],
      [P2, 'running'],
    ]);
  });
});

describe('task status computed from entries', () => {
  const ready = { reason: 'WorkspaceReady', message: 'ready' } as const;

  it('is running with no completion time while a prompt waits', () => {
    const status = computeTaskStatus(task(), entriesOf(task()), ready, NOW);
    expect(status.status).toBe('running');
    expect(status.completedAt).toBeUndefined();
    expect(status.observedGeneration).toBe(2);
  });

  it('is completed at the latest prompt end once every prompt succeeded', () => {
    const entries: PromptStatusEntry[] = [
      { id: P1, status: 'succeeded', completedAt: '2026-11-22T09:58:30.000Z' },
      { id: P2, status: 'succeeded', completedAt: '2026-11-22T09:59:30.000Z' },
    ];
    const status = computeTaskStatus(task(), entries, ready, NOW);
    expect(status).toMatchObject({ status: 'completed', completedAt: '2026-11-22T09:59:30.000Z' });
  });

  it('says prompts wait for the workspace in the Dispatched condition', () => {
    const status = computeTaskStatus(
      task(),
      entriesOf(task()),
      { reason: 'WorkspaceStarting', message: 'm' },
      NOW,
    );
    const dispatched = status.conditions?.find((c) => c.type === 'Dispatched');
    expect(dispatched).toMatchObject({ status: 'False', reason: 'Waiting', observedGeneration: 2 });
    expect(status.conditions?.find((c) => c.type === 'WorkspaceReady')?.status).toBe('False');
  });
});

describe("fields other writers own (the model gateway's usage, the egress proxy's denials)", () => {
  const usage = { requests: 2, inputTokens: 10, outputTokens: 5, costUsd: 0.5 };
  const gatewayEntry: PromptStatusEntry = {
    id: P1,
    status: 'running',
    dispatchedAt: NOW.toISOString(),
    usage,
    budgetExceeded: 'task',
  };

  it("survive the runner's state of a prompt, and its end without the runner", () => {
    const synced = withRunnerState(gatewayEntry, state({ status: 'running', lastSeq: 7 }));
    expect(synced).toMatchObject({ usage, budgetExceeded: 'task', lastSeq: 7 });
    expect(endedEntry(synced, 'failed', NOW, 'gone')).toMatchObject({ usage, budgetExceeded: 'task' });
  });

  it("survive the reconciler's rebuild of the task status", () => {
    const denial = {
      host: 'example.org',
      port: 443,
      reason: 'not_allowed' as const,
      firstAt: NOW.toISOString(),
      lastAt: NOW.toISOString(),
      count: 1,
    };
    const before = task([gatewayEntry]);
    const withOthers: Task = {
      ...before,
      status: {
        ...before.status,
        usage: { ...usage, updatedAt: NOW.toISOString() },
        egressDenials: [denial],
      },
    };
    const next = computeTaskStatus(
      withOthers,
      entriesOf(withOthers),
      { reason: 'WorkspaceReady', message: 'ready' },
      NOW,
    );
    expect(next.usage).toEqual({ ...usage, updatedAt: NOW.toISOString() });
    expect(next.egressDenials).toEqual([denial]);
    expect(next.prompts?.[0]).toMatchObject({ usage, budgetExceeded: 'task' });
  });

  it('a budget failure keeps the usage and records the reason', () => {
    expect(budgetFailedEntry(gatewayEntry, NOW, "the task's budget of $5.00 was reached")).toMatchObject({
      status: 'failed',
      failureReason: 'budget_exceeded',
      error: "the task's budget of $5.00 was reached",
      completedAt: NOW.toISOString(),
      usage,
    });
  });
});
