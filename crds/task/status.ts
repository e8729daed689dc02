import type { PromptSpec, PromptStatus, PromptStatusEntry, Task, TaskStatusValue } from './types.js';
import { budgetReached } from '../model-usage.js';
import { usageThisMonth } from '../organization/types.js';
import type { Organization } from '../organization/types.js';

const TERMINAL: readonly PromptStatus[] = ['succeeded', 'failed', 'canceled'];

export const isTerminal = (status: PromptStatus): boolean => TERMINAL.includes(status);

/** What the operator recorded for one prompt, if anything. */
export const promptEntryOf = (task: Task, promptId: string): PromptStatusEntry | undefined =>
  task.status?.prompts?.find((entry) => entry.id === promptId);

/**
 * A prompt's status as clients see it: what the operator recorded; a prompt whose cancel was
 * requested reads `canceled` at once (the operator kills its process within seconds); anything not
 * yet seen by the operator is `pending`.
 */
export function promptStatusOf(prompt: PromptSpec, entry: PromptStatusEntry | undefined): PromptStatus {
  if (entry !== undefined && isTerminal(entry.status)) return entry.status;
  if (prompt.cancelRequestedAt !== undefined) return 'canceled';
  return entry?.status ?? 'pending';
}

/** docs/api.md#tasks: running while any prompt is pending or running, else after the latest prompt. */
export function taskStatusOf(statuses: readonly PromptStatus[]): TaskStatusValue {
  if (statuses.some((status) => !isTerminal(status))) return 'running';
  switch (statuses.at(-1)) {
    case 'succeeded':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'canceled';
    case 'pending':
    case 'running':
    case undefined: // no prompts: cannot happen, the spec requires one
      return 'running';
  }
}

/** The task's status as clients see it (cancel requests count at once). */
export const clientTaskStatus = (task: Task): TaskStatusValue =>
  taskStatusOf(task.spec.prompts.map((prompt) => promptStatusOf(prompt, promptEntryOf(task, prompt.id))));

/**
 * Whether the operator has recorded every prompt as terminal: only then is the event stream's
 * `done` due (cancel requests alone do not count; the executor may still be writing events).
 */
export const allPromptsRecordedTerminal = (task: Task, promptId?: string): boolean =>
  task.spec.prompts
    .filter((prompt) => promptId === undefined || prompt.id === promptId)
    .every((prompt) => {
      const entry = promptEntryOf(task, prompt.id);
      return entry !== undefined && isTerminal(entry.status);
    });

/**
 * Whether a dispatched prompt may still act for its task (the model gateway and the egress proxy
 * check its token against this): its task not deleted, the prompt not ended and not being
 * canceled. A prompt not yet recorded as dispatched counts: a prompt token exists only once it was
 * dispatched, and the runner starts the executor before the operator's status write (and every
 * cache) can show it, so a quick CLI calls out before either does.
 */
export function isPromptLive(task: Task, promptId: string): boolean {
  if (task.spec.deletedAt !== undefined || task.metadata.deletionTimestamp !== undefined) return false;
  const prompt = task.spec.prompts.find((spec) => spec.id === promptId);
  if (prompt === undefined || prompt.cancelRequestedAt !== undefined) return false;
  const entry = promptEntryOf(task, promptId);
  return entry === undefined || !isTerminal(entry.status);
}

/** Whose model budget a prompt may not run past: its task's own, or its organization's for the month. */
export type BudgetScope = NonNullable<PromptStatusEntry['budgetExceeded']>;

/**
 * The budget the task's prompts have reached, the task's own first, then its organization's for
 * the month of `at`; undefined while both have room. The model gateway refuses calls by it, the
 * Task reconciler stops prompts by it.
 */
export function reachedBudget(
  task: Task,
  organization: Organization | undefined,
  at: Date,
): BudgetScope | undefined {
  if (budgetReached(task.status?.usage, task.spec.budget)) return 'task';
  if (
    organization !== undefined &&
    budgetReached(usageThisMonth(organization.status, at), organization.spec.budget)
  )
    return 'organization';
  return undefined;
}
