import { z } from 'zod';
import { isoTimestamp } from './meta.js';

/**
 * What the model gateway counted (docs/model-gateway.md): tokens read from the providers' own
 * responses, and their cost from the installation's price table. One shape for a prompt, a task
 * and an organization's month, so sums are plain additions.
 */
export const ModelUsageSchema = z
  .object({
    requests: z.number().int().min(0).describe('Model calls forwarded to the provider.'),
    inputTokens: z
      .number()
      .int()
      .min(0)
      .describe('Input (prompt) tokens the provider counted, cache reads and writes included.'),
    outputTokens: z.number().int().min(0).describe('Output (completion) tokens the provider counted.'),
    cacheReadTokens: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Of inputTokens, those read from the provider’s prompt cache (priced lower).'),
    cacheWriteTokens: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Of inputTokens, those written to the provider’s prompt cache.'),
    costUsd: z
      .number()
      .min(0)
      .describe('Cost in US dollars by the installation’s price table; models it does not list count 0.'),
    unpricedRequests: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Requests for models the price table does not list (their cost is missing from costUsd).'),
  })
  .describe('Model usage counted by the model gateway.');
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/** Usage of one model, within a task's or an organization's totals. */
export const ModelUsageByModelSchema = ModelUsageSchema.extend({
  model: z.string().min(1).max(200).describe('The model as the provider named it in its response.'),
  provider: z.enum(['anthropic', 'openai', 'gemini']).describe('The provider the calls went to.'),
});
export type ModelUsageByModel = z.infer<typeof ModelUsageByModelSchema>;

/** Totals plus a bounded per-model breakdown (a task rarely uses more than a few models). */
export const ModelUsageTotalsSchema = ModelUsageSchema.extend({
  byModel: z
    .array(ModelUsageByModelSchema)
    .max(50)
    .optional()
    .describe('The same figures per model; at most 50 models (later ones count in the totals only).'),
  updatedAt: isoTimestamp.optional().describe('When the gateway last added a call (RFC 3339).'),
});
export type ModelUsageTotals = z.infer<typeof ModelUsageTotalsSchema>;

/** Spending limits; each omitted limit is unlimited. */
export const ModelBudgetSchema = z
  .object({
    maxCostUsd: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe('Stop once the counted cost reaches this many US dollars.'),
    maxTokens: z
      .number()
      .int()
      .positive()
      .max(1_000_000_000_000)
      .optional()
      .describe('Stop once input plus output tokens reach this many.'),
  })
  .describe('A budget: a prompt that crosses it fails with reason budget_exceeded.');
export type ModelBudget = z.infer<typeof ModelBudgetSchema>;

/** An empty usage record, the start of every sum. */
export const NO_MODEL_USAGE: ModelUsage = { requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** Whether `usage` reached `budget` (a budget without limits is never reached). */
export function budgetReached(usage: ModelUsage | undefined, budget: ModelBudget | undefined): boolean {
  if (budget === undefined || usage === undefined) return false;
  if (budget.maxCostUsd !== undefined && usage.costUsd >= budget.maxCostUsd) return true;
  return budget.maxTokens !== undefined && usage.inputTokens + usage.outputTokens >= budget.maxTokens;
}

/** `YYYY-MM` of `at` in UTC: the month an organization's usage counts (its status.usage.period). */
export const usagePeriodOf = (at: Date): string => at.toISOString().slice(0, 7);
