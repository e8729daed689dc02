import type { AgentComputer } from '../agent-computer/types.js';
import type { Task } from '../task/types.js';
import {
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  PoolMemberStates,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  isPoolMemberIn,
} from './types.js';
import { isSpokenFor } from './reservation.js';

/**
 * A task without workspaceId that claims a warm-pool member is written at the same time as the claim
 * (docs/adr/0008-warm-pools.md, "A task written with its claim"), not after it: the two writes cost one
 * round trip instead of two. Until the claim that names the task is seen, the task must not run
 * there: the claim may still lose to another claimer (the API then deletes the task), and an
 * unclaimed member is nobody's workspace.
 */
export const ClaimBindings = {
  /** A task given a workspace (or written after its claim, or made cold): nothing to wait for. */
  None: 'none',
  /** The member's claim, or its claim reserved ahead (reservation.ts), names this task: it is the task's workspace. */
  Bound: 'bound',
  /** The member is still available: the claim is not seen yet. */
  Pending: 'pending',
  /** The member was claimed or reserved for another task, or is no pool member: this task never runs there. */
  Lost: 'lost',
} as const;
export type ClaimBinding = (typeof ClaimBindings)[keyof typeof ClaimBindings];

/**
 * How long a task may wait to see its claim before it ends failed: the claim is sent with the task,
 * so only an API server that stopped between the two writes leaves one waiting that long.
 */
export const CLAIM_PENDING_BOUND_MS = 30_000;

/** How `task` stands with the claim of `workspace` it was written with; None for a task written otherwise, or no workspace. */
export function claimBindingOf(task: Task, workspace: AgentComputer | undefined): ClaimBinding {
  const claims = task.metadata.annotations?.[TASK_CLAIMED_WORKSPACE_ANNOTATION];
  if (claims === undefined || workspace === undefined) return ClaimBindings.None;
  if (claims !== workspace.metadata.name) return ClaimBindings.Lost;
  if (workspace.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION] === task.metadata.name)
    return ClaimBindings.Bound;
  return isPoolMemberIn(workspace, PoolMemberStates.Available) && !isSpokenFor(workspace)
    ? ClaimBindings.Pending
    : ClaimBindings.Lost;
}
