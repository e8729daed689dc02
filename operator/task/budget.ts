import { reachedBudget, usageThisMonth } from '../../crds/index.js';
import type {
  BudgetScope,
  ModelBudget,
  ModelUsage,
  Organization,
  PromptStatusEntry,
  Task,
} from '../../crds/index.js';

/** A budget a prompt may not run past, and the error its prompt fails with. */
export interface BudgetBreach {
  scope: BudgetScope;
  message: string;
}

const costText = (usd: number): string => `$${usd.toFixed(2)}`;
const tokensText = (tokens: number): string => `${tokens} tokens`;

/** "$5.00" or "1000 tokens": the limit of a reached `budget` that `usage` reached (the cost first). */
function reachedLimit(budget: ModelBudget | undefined, usage: ModelUsage | undefined): string | undefined {
  if (budget?.maxCostUsd !== undefined && usage !== undefined && usage.costUsd >= budget.maxCostUsd)
    return costText(budget.maxCostUsd);
  return budget?.maxTokens === undefined ? undefined : tokensText(budget.maxTokens);
}

/** A budget's first limit (the gateway judged which one it reached). */
function firstLimit(budget: ModelBudget | undefined): string | undefined {
  if (budget?.maxCostUsd !== undefined) return costText(budget.maxCostUsd);
  return budget?.maxTokens === undefined ? undefined : tokensText(budget.maxTokens);
}

function breachMessage(scope: BudgetScope, limit: string | undefined): string {
  const whose = scope === 'task' ? "the task's budget" : "the organization's monthly budget";
  return limit === undefined ? `${whose} was reached` : `${whose} of ${limit} was reached`;
}

/**
 * The budget the task's prompts are over, if any (docs/adr/0009: level-based): the task's own
 * `spec.budget` against `status.usage`, then the organization's against this month's usage.
 */
export function taskBudgetBreach(
  task: Task,
  organization: Organization | undefined,
  now: Date,
): BudgetBreach | undefined {
  const scope = reachedBudget(task, organization, now);
  if (scope === undefined) return undefined;
  const limit =
    scope === 'task'
      ? reachedLimit(task.spec.budget, task.status?.usage)
      : reachedLimit(organization?.spec.budget, usageThisMonth(organization?.status, now));
  return { scope, message: breachMessage(scope, limit) };
}

/**
 * The budget one prompt may not run past: the one the model gateway flagged it for
 * (`budgetExceeded`), else the task's level. A flag names the limit when the budget is still set.
 */
export function promptBudgetBreach(
  entry: PromptStatusEntry,
  taskBreach: BudgetBreach | undefined,
  task: Task,
  organization: Organization | undefined,
): BudgetBreach | undefined {
  const flagged = entry.budgetExceeded;
  if (flagged === undefined) return taskBreach;
  if (taskBreach?.scope === flagged) return taskBreach;
  const budget = flagged === 'task' ? task.spec.budget : organization?.spec.budget;
  return { scope: flagged, message: breachMessage(flagged, firstLimit(budget)) };
}
