import { describe, expect, it } from '@jest/globals';
import {
  allPromptsRecordedTerminal,
  clientTaskStatus,
  promptStatusOf,
  taskStatusOf,
} from '../../crds/index.js';
import type { PromptStatus, Task, TaskStatusValue } from '../../crds/index.js';
import { taskFixture } from '../support/task-fixture.js';

const P1 = '00000000-0000-4000-8000-000000000001';
const P2 = '00000000-0000-4000-8000-000000000002';
const AT = '2026-11-22T10:00:00.000Z';

const task = (
  prompts: { id: string; cancel?: boolean }[],
  entries: { id: string; status: PromptStatus }[],
): Task => taskFixture({ prompts, entries });

describe('task status derived from prompts (docs/api.md#tasks)', () => {
  const cases: [number, PromptStatus[], TaskStatusValue][] = [
    [1, ['pending'], 'running'],
    [2, ['running'], 'running'],
    [3, ['succeeded'], 'completed'],
    [4, ['failed'], 'failed'],
    [5, ['canceled'], 'canceled'],
    [6, ['succeeded', 'pending'], 'running'],
    [7, ['failed', 'succeeded'], 'completed'],
    [8, ['succeeded', 'failed'], 'failed'],
    [9, ['canceled', 'running'], 'running'],
    [10, ['succeeded', 'canceled'], 'canceled'],
  ];
  it.each(cases)('case %i: prompts %j make the task %s', (_n, statuses, expected) => {
    expect(taskStatusOf(statuses)).toBe(expected);
  });
});

describe('prompt status as clients see it', () => {
  it('is pending before the operator has seen the prompt', () => {
    expect(promptStatusOf({ id: P1, text: 'x', submittedAt: AT }, undefined)).toBe('pending');
  });

  it('reads canceled as soon as the cancel is requested, even while the process is being killed', () => {
    expect(
      promptStatusOf(
        { id: P1, text: 'x', submittedAt: AT, cancelRequestedAt: AT },
        { id: P1, status: 'running' },
      ),
    ).toBe('canceled');
  });

  it('keeps a recorded final status over a later cancel request', () => {
    expect(
      promptStatusOf(
        { id: P1, text: 'x', submittedAt: AT, cancelRequestedAt: AT },
        { id: P1, status: 'succeeded' },
      ),
    ).toBe('succeeded');
  });

  it('makes a task with a cancel requested on its running prompt canceled for clients', () => {
    expect(clientTaskStatus(task([{ id: P1, cancel: true }], [{ id: P1, status: 'running' }]))).toBe(
      'canceled',
    );
  });
});

describe('whether the event stream may end', () => {
  it('is not yet when a cancel was requested but the operator has not recorded the end', () => {
    expect(
      allPromptsRecordedTerminal(task([{ id: P1, cancel: true }], [{ id: P1, status: 'running' }])),
    ).toBe(false);
  });

  it('is when every prompt is recorded final', () => {
    const t = task(
      [{ id: P1 }, { id: P2 }],
      [
        { id: P1, status: 'succeeded' },
        { id: P2, status: 'failed' },
      ],
    );
    expect(allPromptsRecordedTerminal(t)).toBe(true);
  });

  it('considers only the requested prompt when filtered by prompt id', () => {
    const t = task([{ id: P1 }, { id: P2 }], [{ id: P1, status: 'succeeded' }]);
    expect(allPromptsRecordedTerminal(t, P1)).toBe(true);
    expect(allPromptsRecordedTerminal(t)).toBe(false);
  });
});
