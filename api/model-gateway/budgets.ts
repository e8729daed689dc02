import { TaskType } from '../../crds/index.js';
import type { BudgetScope, TaskStatus } from '../../crds/index.js';
import type { PromptTokenClaims } from '../../platform/model-gateway/token.js';
import { updateStatus } from '../../platform/store/status-writer.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReadModel } from '../read-model.js';

/** `status` with the prompt's entry marked (a mark already there stays: the first budget reached is the cause). */
export function withBudgetMark(status: TaskStatus, prompt: string, budget: BudgetScope): TaskStatus {
  if (status.prompts === undefined) return status;
  return {
    ...status,
    prompts: status.prompts.map((entry) =>
      entry.id === prompt && entry.budgetExceeded === undefined
        ? { ...entry, budgetExceeded: budget }
        : entry,
    ),
  };
}

/**
 * Marks the prompt of `claims` as stopped by `budget`; the Task reconciler ends a marked prompt
 * (failureReason budget_exceeded). Every other field of the status stays as read.
 */
export async function markBudgetExceeded(
  store: ResourceStore,
  readModel: ReadModel,
  claims: PromptTokenClaims,
  budget: BudgetScope,
): Promise<void> {
  const written = await updateStatus(
    store,
    TaskType,
    { namespace: claims.namespace, name: claims.task },
    (task) => withBudgetMark(task.status ?? {}, claims.prompt, budget),
  );
  if (written !== undefined) readModel.observeTask(written);
}
