import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { registeredMetric } from '../../platform/metrics.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import type { ModelUsage } from '../../crds/index.js';

/** How a call through the gateway ended (the `outcome` label). */
export const GatewayOutcomes = {
  /** Forwarded to the provider and answered (whatever the provider's status). */
  Forwarded: 'forwarded',
  /** Refused: no valid token for a live prompt, or no key configured. */
  Unauthorized: 'unauthorized',
  /** Refused: the task's or the organization's budget is reached. */
  BudgetExceeded: 'budget_exceeded',
  /** The provider failed, went silent or broke off, or the usage could not be recorded. */
  UpstreamError: 'upstream_error',
  /** Refused: the request body is over the gateway's limit. */
  TooLarge: 'too_large',
} as const;
export type GatewayOutcome = (typeof GatewayOutcomes)[keyof typeof GatewayOutcomes];

const REQUESTS = 'agentry_model_requests_total';
const TOKENS = 'agentry_model_tokens_total';
const COST = 'agentry_model_cost_usd_total';
const DURATION = 'agentry_model_request_duration_seconds';

/** Distinct model label values before further models are counted as `other`. */
const MAX_MODEL_LABELS = 100;
const OTHER_MODEL = 'other';

type TokenLabels = 'org' | 'provider' | 'model' | 'kind';

/** The gateway's metrics of one registry (docs/model-gateway.md#metrics). */
export class GatewayMetrics {
  private readonly requests: Counter<'provider' | 'outcome'>;
  private readonly tokens: Counter<TokenLabels>;
  private readonly cost: Counter<'org' | 'provider' | 'model'>;
  private readonly duration: Histogram<'provider' | 'outcome'>;
  private readonly models = new Set<string>();

  constructor(registry: Registry) {
    this.requests =
      registeredMetric(registry, REQUESTS, Counter<'provider' | 'outcome'>) ??
      new Counter({
        name: REQUESTS,
        help: 'Model calls through the model gateway, by provider and outcome',
        labelNames: ['provider', 'outcome'],
        registers: [registry],
      });
    this.tokens =
      registeredMetric(registry, TOKENS, Counter<TokenLabels>) ??
      new Counter({
        name: TOKENS,
        help: 'Tokens the providers counted for calls through the model gateway, by kind (input, output, cache_read, cache_write)',
        labelNames: ['org', 'provider', 'model', 'kind'],
        registers: [registry],
      });
    this.cost =
      registeredMetric(registry, COST, Counter<'org' | 'provider' | 'model'>) ??
      new Counter({
        name: COST,
        help: 'Cost of calls through the model gateway by the price table, in US dollars',
        labelNames: ['org', 'provider', 'model'],
        registers: [registry],
      });
    this.duration =
      registeredMetric(registry, DURATION, Histogram<'provider' | 'outcome'>) ??
      new Histogram({
        name: DURATION,
        help: 'Time from a model call’s arrival to the end of its answer, by provider and outcome',
        labelNames: ['provider', 'outcome'],
        buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
        registers: [registry],
      });
  }

  /** One call ended with `outcome` after `seconds`. */
  ended(provider: ModelProvider, outcome: GatewayOutcome, seconds: number): void {
    this.requests.inc({ provider, outcome });
    this.duration.observe({ provider, outcome }, seconds);
  }

  /** The tokens and cost of one recorded call. */
  used(org: string, provider: ModelProvider, model: string, usage: ModelUsage): void {
    const labels = { org, provider, model: this.modelLabel(model) };
    this.tokens.inc({ ...labels, kind: 'input' }, usage.inputTokens);
    this.tokens.inc({ ...labels, kind: 'output' }, usage.outputTokens);
    this.tokens.inc({ ...labels, kind: 'cache_read' }, usage.cacheReadTokens ?? 0);
    this.tokens.inc({ ...labels, kind: 'cache_write' }, usage.cacheWriteTokens ?? 0);
    this.cost.inc(labels, usage.costUsd);
  }

  /** Model names come from responses: past a bound, new ones fold into `other`. */
  private modelLabel(model: string): string {
    if (this.models.has(model)) return model;
    if (this.models.size >= MAX_MODEL_LABELS) return OTHER_MODEL;
    this.models.add(model);
    return model;
  }
}
