// How a task written with its warm-pool member's claim stands with that claim
// (crds/workspace-pool/claim-binding.ts): the operator runs it only when Bound.
import { describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  ClaimBindings,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskSpecSchema,
  claimBindingOf,
  reservedMember,
} from '../../crds/index.js';
import type { AgentComputer, PoolMemberState, Task } from '../../crds/index.js';

const task = (claims: string | undefined): Task => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Task',
  metadata: {
    name: 'task-1',
    namespace: 'agentry-org-acme',
    ...(claims === undefined ? {} : { annotations: { [TASK_CLAIMED_WORKSPACE_ANNOTATION]: claims } }),
  },
  spec: TaskSpecSchema.parse({
    workspace: 'member-1',
    executor: 'shell',
    title: 't',
    owner: 'u',
    prompts: [{ id: '0b5e4a3c-2f1d-4c8e-9a7b-6d5c4b3a2f10', text: 'x', submittedAt: '2026-06-01T12:00:00Z' }],
  }),
});

const member = (state: PoolMemberState | undefined, forTask?: string): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: {
    name: 'member-1',
    namespace: 'agentry-org-acme',
    labels: state === undefined ? {} : { [POOL_LABEL]: 'warm', [POOL_MEMBER_STATE_LABEL]: state },
    ...(forTask === undefined ? {} : { annotations: { [POOL_CLAIMED_FOR_TASK_ANNOTATION]: forTask } }),
  },
  spec: AgentComputerSpecSchema.parse({}),
});

describe('a task and the claim it was written with', () => {
  it('is bound once the member is claimed for it', () => {
    expect(claimBindingOf(task('member-1'), member('claimed', 'task-1'))).toBe(ClaimBindings.Bound);
  });

  it('is bound the moment it exists when the member was reserved ahead for it, though still available', () => {
    const reserved = reservedMember(member('available'), 'api-1', 'task-1', new Date('2026-06-01T12:05:00Z'));
    expect(claimBindingOf(task('member-1'), reserved)).toBe(ClaimBindings.Bound);
  });

  it('is lost when the member was reserved ahead for another task', () => {
    const reserved = reservedMember(member('available'), 'api-1', 'task-2', new Date('2026-06-01T12:05:00Z'));
    expect(claimBindingOf(task('member-1'), reserved)).toBe(ClaimBindings.Lost);
  });

  it('is pending while the member is still available', () => {
    expect(claimBindingOf(task('member-1'), member('available'))).toBe(ClaimBindings.Pending);
  });

  it('is lost when the member was claimed for another task', () => {
    expect(claimBindingOf(task('member-1'), member('claimed', 'task-2'))).toBe(ClaimBindings.Lost);
  });

  it('is lost when the member was claimed without a task (POST /agent-computers)', () => {
    expect(claimBindingOf(task('member-1'), member('claimed'))).toBe(ClaimBindings.Lost);
  });

  it('is lost when the annotation names another workspace than the task runs on', () => {
    expect(claimBindingOf(task('member-2'), member('claimed', 'task-1'))).toBe(ClaimBindings.Lost);
  });

  it('is none for a task written without a claim, whatever its workspace', () => {
    expect(claimBindingOf(task(undefined), member('available'))).toBe(ClaimBindings.None);
    expect(claimBindingOf(task(undefined), member(undefined))).toBe(ClaimBindings.None);
  });

  it('is none when the workspace is gone (the task fails as its workspace is missing)', () => {
    expect(claimBindingOf(task('member-1'), undefined)).toBe(ClaimBindings.None);
  });
});
