import type { IncomingMessage, ServerResponse } from 'node:http';
import { reachedBudget } from '../../crds/index.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { Logger } from '../../platform/log.js';
import {
  MODEL_GATEWAY_PATH,
  PROVIDER_CONVENTIONS,
  ModelProviderSchema,
} from '../../platform/model-gateway/providers.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import type { PromptTokens } from '../../platform/model-gateway/token.js';
import type { ModelPrices } from '../../platform/model-prices.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReadModel } from '../read-model.js';
import { markBudgetExceeded } from './budgets.js';
import { GatewayOutcomes } from './metrics.js';
import type { GatewayMetrics } from './metrics.js';
import type { GatewayOutcome } from './metrics.js';
import { PromptAccessCheck, presentedToken } from './prompt-access.js';
import type { PromptAccess } from './prompt-access.js';
import { GatewayRefusals, sendProviderError } from './provider-errors.js';
import { ProviderKeys } from './provider-keys.js';
import { relayAnswer } from './relay-answer.js';
import type { RelayEnd } from './relay-answer.js';
import { BodyTooLargeError, declaredTooLarge, readBoundedBody } from './request-body.js';
import { UsageRecorder, recordedCallOf } from './usage-recorder.js';
import { usageReaderFor } from './usage/readers.js';
import { callUpstream, upstreamHeaders, upstreamUrl } from './upstream.js';
import { answerUsage } from './usage-endpoint.js';

/** Bound of a call's body and of a buffered answer (docs/model-gateway.md#limits). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** A provider silent this long ends the call (long thinking pauses stay well within it). */
export const UPSTREAM_IDLE_TIMEOUT_MS = 10 * 60_000;

export interface ModelGatewayOptions {
  store: ResourceStore;
  readModel: ReadModel;
  executors: ExecutorCatalog;
  tokens: PromptTokens;
  prices: ModelPrices;
  metrics: GatewayMetrics;
  /** AGENTRY_MODEL_UPSTREAMS: where each provider's calls go; omitted: its public endpoint. */
  upstreams: Readonly<Partial<Record<ModelProvider, string>>>;
  /** The embedded default's own environment: a key variable without a Secret is taken from it. */
  keyFallback: Readonly<Record<string, string>>;
  now: () => Date;
  maxBodyBytes?: number;
  idleTimeoutMs?: number;
}

const UNAUTHORIZED = 'the prompt token is not valid for a running prompt';

const outcomeOf = (end: RelayEnd): GatewayOutcome =>
  end === 'complete' || end === 'client_gone' ? GatewayOutcomes.Forwarded : GatewayOutcomes.UpstreamError;

/**
 * The model gateway (docs/model-gateway.md): `ANY /model-gateway/<provider>/<path>` with a prompt
 * token where the provider's key goes. It checks the token and the budgets, swaps the token for the
 * organization's key, streams the provider's answer back unchanged, and records its usage before
 * the answer ends.
 */
export class ModelGateway {
  private readonly access: PromptAccessCheck;
  private readonly keys: ProviderKeys;
  private readonly recorder: UsageRecorder;
  private readonly maxBodyBytes: number;
  private readonly idleTimeoutMs: number;

  constructor(private readonly options: ModelGatewayOptions) {
    this.access = new PromptAccessCheck(options.tokens, options.readModel, options.now);
    this.keys = new ProviderKeys(options.store, options.executors, options.keyFallback);
    this.recorder = new UsageRecorder(options.store, options.readModel, options.now);
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.idleTimeoutMs = options.idleTimeoutMs ?? UPSTREAM_IDLE_TIMEOUT_MS;
  }

  /** Serves a request below the gateway's path (`/model-gateway/<provider>/...` or `/model-gateway/usage`). */
  readonly handle = async (req: IncomingMessage, res: ServerResponse, log: Logger): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    const [, first = '', ...rest] = url.pathname.slice(MODEL_GATEWAY_PATH.length).split('/');
    if (first === 'usage' && rest.length === 0) {
      await answerUsage(req, res, { store: this.options.store, access: this.access });
      return;
    }
    const provider = ModelProviderSchema.safeParse(first);
    if (!provider.success) {
      sendProviderError(res, 'openai', GatewayRefusals.NotFound, 'unknown model provider');
      return;
    }
    const started = performance.now();
    const outcome = await this.serve(req, res, log, provider.data, `/${rest.join('/')}`, url.searchParams);
    this.options.metrics.ended(provider.data, outcome, (performance.now() - started) / 1000);
  };

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    log: Logger,
    provider: ModelProvider,
    path: string,
    query: URLSearchParams,
  ): Promise<GatewayOutcome> {
    const access = await this.access.check(presentedToken(provider, req, query));
    if (access === undefined) {
      sendProviderError(res, provider, GatewayRefusals.Unauthorized, UNAUTHORIZED);
      return GatewayOutcomes.Unauthorized;
    }
    if (await this.refusedOverBudget(res, log, provider, access)) return GatewayOutcomes.BudgetExceeded;
    const key = await this.keys.keyFor(access.claims.namespace, access.claims.executor, provider);
    if (key === undefined) {
      const message = `no ${provider} key is configured for this organization`;
      sendProviderError(res, provider, GatewayRefusals.Unauthorized, message);
      return GatewayOutcomes.Unauthorized;
    }
    const body = await this.boundedBody(req, res, provider);
    if (body === undefined) return GatewayOutcomes.TooLarge;
    return this.forward(req, res, log, {
      provider,
      path,
      query,
      key,
      body,
      access,
    });
  }

  /**
   * Refuses a call of a task or organization whose budget is reached (429 in the provider's shape)
   * and marks its prompt, so the Task reconciler stops it; true when it refused.
   */
  private async refusedOverBudget(
    res: ServerResponse,
    log: Logger,
    provider: ModelProvider,
    access: PromptAccess,
  ): Promise<boolean> {
    const budget = reachedBudget(access.task, access.organization, this.options.now());
    if (budget === undefined) return false;
    await markBudgetExceeded(this.options.store, this.options.readModel, access.claims, budget).catch(
      (err: unknown) => {
        log.warn({ err, task: access.claims.task }, 'marking a prompt over budget failed');
      },
    );
    const whose = budget === 'task' ? 'the task' : 'the organization';
    sendProviderError(
      res,
      provider,
      GatewayRefusals.BudgetExceeded,
      `the model budget of ${whose} is reached`,
    );
    return true;
  }

  /** The call's body, or undefined once a body over the limit was refused (413 in the provider's shape). */
  private async boundedBody(
    req: IncomingMessage,
    res: ServerResponse,
    provider: ModelProvider,
  ): Promise<Buffer | undefined> {
    try {
      if (declaredTooLarge(req, this.maxBodyBytes)) throw new BodyTooLargeError(this.maxBodyBytes);
      return await readBoundedBody(req, this.maxBodyBytes);
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      // The rest of the body is not read: the connection cannot be reused.
      res.setHeader('connection', 'close');
      sendProviderError(res, provider, GatewayRefusals.TooLarge, err.message);
      return undefined;
    }
  }

  private async forward(
    req: IncomingMessage,
    res: ServerResponse,
    requestLog: Logger,
    call: {
      provider: ModelProvider;
      path: string;
      query: URLSearchParams;
      key: string;
      body: Buffer;
      access: PromptAccess;
    },
  ): Promise<GatewayOutcome> {
    const { provider, access } = call;
    const base = this.options.upstreams[provider] ?? PROVIDER_CONVENTIONS[provider].defaultUpstream;
    const upstream = callUpstream(upstreamUrl(provider, base, call.path, call.query), {
      method: req.method ?? 'GET',
      headers: upstreamHeaders(provider, req.headers, call.key, call.body.length),
      body: call.body,
      idleTimeoutMs: this.idleTimeoutMs,
    });
    // A client that leaves ends the provider's call too (it would otherwise run, and bill, on).
    res.once('close', () => {
      if (!res.writableFinished) upstream.abort();
    });
    const log = requestLog.child({ provider, task: access.claims.task, prompt: access.claims.prompt });
    let answer: IncomingMessage;
    try {
      answer = await upstream.response;
    } catch (err) {
      log.warn({ err }, 'the model provider could not be reached');
      if (!res.headersSent && !res.destroyed)
        sendProviderError(
          res,
          provider,
          GatewayRefusals.UpstreamError,
          `the ${provider} API could not be reached`,
        );
      return GatewayOutcomes.UpstreamError;
    }
    const org = access.organization.metadata.name;
    const end = await relayAnswer(answer, res, {
      reader: usageReaderFor(provider),
      maxBytes: this.maxBodyBytes,
      record: async (usage) => {
        const recorded = recordedCallOf(usage, this.options.prices);
        await this.recorder.record(access.claims, access.organization, provider, recorded);
        this.options.metrics.used(org, provider, recorded.model, recorded.usage);
      },
      onRecordError: (err) => {
        log.error({ err }, 'recording model usage failed: the call fails');
      },
    });
    if (end === 'not_answered')
      sendProviderError(
        res,
        provider,
        GatewayRefusals.UpstreamError,
        `the ${provider} API call could not be completed`,
      );
    return outcomeOf(end);
  }
}
