// The Task whose life every transition replays: two prompts, each running then done.
import { TaskType, apiVersionOf } from '../../crds/index.js';
import type { PromptStatusEntry, Task, TaskStatus } from '../../crds/index.js';
import { NS } from './config.js';

export const PROMPT_1 = '11111111-2222-4333-8444-555555555555';
export const PROMPT_2 = '66666666-7777-4888-9999-aaaaaaaaaaaa';
/** A final answer of a realistic size: the completed task's delivery body comes to about 1 KB. */
const FINAL_RESULT =
  'Done. I updated the retry logic in src/queue/worker.ts so a failed job is re-enqueued with ' +
  'exponential back-off (base 2 s, cap 5 min) instead of being dropped, added unit tests for the ' +
  'back-off schedule and for the poison-message path, and ran the whole suite: 214 tests pass. ' +
  'The change is on branch fix/retry-backoff; the diff touches 3 files (+148, -37). I did not ' +
  'change the public API. One follow-up worth considering: the dead-letter queue has no alerting; ' +
  'a metric on its depth would make stuck jobs visible before users notice them.';

const promptEntry = (task: Task, id: string): PromptStatusEntry | undefined =>
  task.status?.prompts?.find((entry) => entry.id === id);

/** The status after step `step` of a task's life (without the outbox). */
export function nextStatus(step: number, task: Task, now: Date): TaskStatus {
  const at = now.toISOString();
  const first = promptEntry(task, PROMPT_1) ?? { id: PROMPT_1, status: 'pending' };
  const second = promptEntry(task, PROMPT_2) ?? { id: PROMPT_2, status: 'pending' };
  const running = (entry: PromptStatusEntry): PromptStatusEntry => ({
    ...entry,
    status: 'running',
    dispatchedAt: at,
    startedAt: at,
    lastSeq: 2,
  });
  const done = (entry: PromptStatusEntry): PromptStatusEntry => ({
    ...entry,
    status: 'succeeded',
    completedAt: at,
    lastSeq: 57,
    finalResult: FINAL_RESULT,
  });
  switch (step) {
    case 0:
      return { status: 'running', prompts: [first] };
    case 1:
      return { status: 'running', prompts: [running(first)] };
    case 2:
      return { status: 'completed', completedAt: at, prompts: [done(first)] };
    case 3:
      return { status: 'running', prompts: [first, running(second)] };
    default:
      return { status: 'completed', completedAt: at, prompts: [first, done(second)] };
  }
}

export function newTask(name: string): Task {
  return {
    apiVersion: apiVersionOf(TaskType),
    kind: 'Task',
    metadata: { name, namespace: NS },
    spec: {
      workspace: 'ws-bench',
      executor: 'claude',
      title: 'Make failed queue jobs retry with exponential back-off instead of being dropped',
      owner: 'ann',
      visibility: 'shared',
      githubUrl: 'https://github.com/example/queue-service',
      branch: 'main',
      prompts: [{ id: PROMPT_1, text: 'Fix the retry logic', submittedAt: new Date().toISOString() }],
    },
  };
}
