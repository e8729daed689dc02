import type { ModelUsage, ModelUsageByModel, ModelUsageTotals } from '../../crds/index.js';
import { NO_MODEL_USAGE } from '../../crds/index.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';

/** The most models a totals record breaks down (ModelUsageTotalsSchema); later ones count in the totals only. */
const MAX_MODELS = 50;
/** What a call is filed under when the provider named no model. */
export const UNNAMED_MODEL = 'unknown';

/** Dollars summed to the nano-dollar, so many small additions do not drift. */
const dollars = (value: number): number => Math.round(value * 1e9) / 1e9;

const optionalSum = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);

/** `a + b`, figure by figure; optional figures stay absent when both lack them. */
export function sumUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  const cacheReadTokens = optionalSum(a.cacheReadTokens, b.cacheReadTokens);
  const cacheWriteTokens = optionalSum(a.cacheWriteTokens, b.cacheWriteTokens);
  const unpricedRequests = optionalSum(a.unpricedRequests, b.unpricedRequests);
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cacheReadTokens === undefined ? {} : { cacheReadTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
    costUsd: dollars(a.costUsd + b.costUsd),
    ...(unpricedRequests === undefined ? {} : { unpricedRequests }),
  };
}

/** The figures of a totals record, without its breakdown and timestamp. */
const figuresOf = (totals: ModelUsageTotals | undefined): ModelUsage => {
  if (totals === undefined) return NO_MODEL_USAGE;
  const { byModel: _byModel, updatedAt: _updatedAt, ...figures } = totals;
  return figures;
};

/** `totals` plus one call, in the sum and in the call's model's line. */
export function addToTotals(
  totals: ModelUsageTotals | undefined,
  call: ModelUsage,
  model: { model: string; provider: ModelProvider },
  at: Date,
): ModelUsageTotals {
  const byModel: ModelUsageByModel[] = [...(totals?.byModel ?? [])];
  const index = byModel.findIndex((line) => line.model === model.model && line.provider === model.provider);
  const line = byModel[index];
  if (line !== undefined) byModel[index] = { ...line, ...sumUsage(line, call) };
  else if (byModel.length < MAX_MODELS) byModel.push({ ...model, ...call });
  return { ...sumUsage(figuresOf(totals), call), byModel, updatedAt: at.toISOString() };
}
