// Which prompts a prompt token still acts for (the model gateway's and the egress proxy's check).
import { describe, expect, it } from '@jest/globals';
import { TaskSpecSchema, isPromptLive } from '../../crds/index.js';
import type { PromptStatus, Task } from '../../crds/index.js';

const PROMPT = '3b7c1c1e-5a57-4e43-9a49-1f4b9d1e2a10';

function task(
  options: { entry?: PromptStatus; cancel?: boolean; deleted?: boolean; deleting?: boolean } = {},
): Task {
  const at = '2026-11-25T00:00:00Z';
  return {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: {
      name: 't',
      namespace: 'agentry-org-acme',
      ...(options.deleting === true ? { deletionTimestamp: at } : {}),
    },
    spec: TaskSpecSchema.parse({
      workspace: 'ws',
      executor: 'claude',
      title: 't',
      owner: 'alice',
      prompts: [
        {
          id: PROMPT,
          text: 'hi',
          submittedAt: at,
          ...(options.cancel === true ? { cancelRequestedAt: at } : {}),
        },
      ],
      ...(options.deleted === true ? { deletedAt: at } : {}),
    }),
    ...(options.entry === undefined ? {} : { status: { prompts: [{ id: PROMPT, status: options.entry }] } }),
  };
}

describe('isPromptLive', () => {
  it('holds for a prompt the operator has not recorded yet (its executor starts before that write)', () => {
    expect(isPromptLive(task(), PROMPT)).toBe(true);
  });

  it.each<PromptStatus>(['pending', 'running'])('holds while the prompt is %s', (entry) => {
    expect(isPromptLive(task({ entry }), PROMPT)).toBe(true);
  });

  it.each<PromptStatus>(['succeeded', 'failed', 'canceled'])('ends once the prompt %s', (entry) => {
    expect(isPromptLive(task({ entry }), PROMPT)).toBe(false);
  });

  it('ends when a cancel is requested, before the operator stops the prompt', () => {
    expect(isPromptLive(task({ entry: 'running', cancel: true }), PROMPT)).toBe(false);
  });

  it('ends when the task is deleted (soft or by Kubernetes)', () => {
    expect(isPromptLive(task({ entry: 'running', deleted: true }), PROMPT)).toBe(false);
    expect(isPromptLive(task({ entry: 'running', deleting: true }), PROMPT)).toBe(false);
  });

  it('never holds for a prompt the task does not have', () => {
    expect(isPromptLive(task({ entry: 'running' }), 'another-prompt')).toBe(false);
  });
});
