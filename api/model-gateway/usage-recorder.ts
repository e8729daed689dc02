import {
  NO_MODEL_USAGE,
  OrganizationType,
  TaskType,
  budgetReached,
  usagePeriodOf,
  usageThisMonth,
} from '../../crds/index.js';
import type { ModelUsage, Organization, Task, TaskStatus } from '../../crds/index.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import type { PromptTokenClaims } from '../../platform/model-gateway/token.js';
import type { ModelPrices } from '../../platform/model-prices.js';
import { updateStatus } from '../../platform/store/status-writer.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReadModel } from '../read-model.js';
import { markBudgetExceeded, withBudgetMark } from './budgets.js';
import type { CallUsage } from './usage/call-usage.js';
import { UNNAMED_MODEL, addToTotals, sumUsage } from './usage-sums.js';

/** One call as recorded: its figures, cost included, and the model it is filed under. */
export interface RecordedCall {
  model: string;
  usage: ModelUsage;
  /** Whether the price table lists the model (its cost is then in usage.costUsd). */
  priced: boolean;
}

/** A call's usage record: one request, its tokens and its cost by the price table. */
export function recordedCallOf(call: CallUsage, prices: ModelPrices): RecordedCall {
  const model = call.model ?? UNNAMED_MODEL;
  const cost = prices.costOf(model, call);
  const tokens = call.inputTokens + call.outputTokens;
  // A call that used no tokens (an error the provider answered 2xx, a count) costs nothing, priced or not.
  const unpriced = cost === undefined && tokens > 0;
  return {
    model,
    priced: !unpriced,
    usage: {
      requests: 1,
      inputTokens: call.inputTokens,
      outputTokens: call.outputTokens,
      ...(call.cacheReadTokens > 0 ? { cacheReadTokens: call.cacheReadTokens } : {}),
      ...(call.cacheWriteTokens > 0 ? { cacheWriteTokens: call.cacheWriteTokens } : {}),
      costUsd: cost ?? 0,
      ...(unpriced ? { unpricedRequests: 1 } : {}),
    },
  };
}

/**
 * Adds a call to its prompt's entry, its task's totals and its organization's month (ADR 0009),
 * each a version-checked read-merge-write that keeps every field it does not own. A call that
 * brings the task or the organization to its budget marks the prompt (the answer still completes).
 * Throws when a write fails: the gateway then fails the call rather than leave it uncounted.
 */
export class UsageRecorder {
  constructor(
    private readonly store: ResourceStore,
    private readonly readModel: ReadModel,
    private readonly now: () => Date,
  ) {}

  async record(
    claims: PromptTokenClaims,
    organization: Organization,
    provider: ModelProvider,
    call: RecordedCall,
  ): Promise<void> {
    const at = this.now();
    const line = { model: call.model, provider };
    const task = await updateStatus(
      this.store,
      TaskType,
      { namespace: claims.namespace, name: claims.task },
      (current) => taskStatusWithCall(current, claims.prompt, call.usage, line, at),
    );
    if (task === undefined) throw new Error('the task is gone');
    this.readModel.observeTask(task);
    const org = await updateStatus(
      this.store,
      OrganizationType,
      { namespace: undefined, name: organization.metadata.name },
      (current) => {
        const status = current.status ?? {};
        const month = usageThisMonth(status, at);
        return {
          ...status,
          usage: { ...addToTotals(month, call.usage, line, at), period: usagePeriodOf(at) },
        };
      },
    );
    if (org === undefined) throw new Error('the organization is gone');
    this.readModel.organizations.observe(org);
    if (budgetReached(usageThisMonth(org.status, at), org.spec.budget))
      await markBudgetExceeded(this.store, this.readModel, claims, 'organization');
  }
}

/** The task's status with one call added to its prompt's entry (when there is one) and its totals. */
function taskStatusWithCall(
  task: Task,
  prompt: string,
  usage: ModelUsage,
  line: { model: string; provider: ModelProvider },
  at: Date,
): TaskStatus {
  const status = task.status ?? {};
  const prompts = status.prompts?.map((entry) =>
    entry.id === prompt ? { ...entry, usage: sumUsage(entry.usage ?? NO_MODEL_USAGE, usage) } : entry,
  );
  const next: TaskStatus = {
    ...status,
    ...(prompts === undefined ? {} : { prompts }),
    usage: addToTotals(status.usage, usage, line, at),
  };
  return budgetReached(next.usage, task.spec.budget) ? withBudgetMark(next, prompt, 'task') : next;
}
