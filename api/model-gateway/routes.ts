import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';
import { PromptTokens } from '../../platform/model-gateway/token.js';
import { ModelPrices } from '../../platform/model-prices.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReadModel } from '../read-model.js';
import { ModelGateway } from './gateway.js';
import { GatewayMetrics } from './metrics.js';

/** The installation's settings of the model gateway (docs/model-gateway.md). */
export interface ModelGatewaySettings {
  /** AGENTRY_MODEL_UPSTREAMS; omitted providers: their public endpoints. */
  upstreams?: Readonly<Partial<Record<ModelProvider, string>>>;
  /** AGENTRY_MODEL_PRICES_FILE's table; default: the built-in one. */
  prices?: ModelPrices;
  /** The embedded default: key variables without a Secret are read from this environment. */
  keyFallback?: Readonly<Record<string, string>>;
  /** Bound of a call's body and of a buffered answer (32 MiB when omitted). */
  maxBodyBytes?: number;
  /** How long a provider may stay silent (10 minutes when omitted). */
  idleTimeoutMs?: number;
}

/**
 * The gateway's handler, routed at MODEL_GATEWAY_PATH/*path before the REST API's authentication and
 * body parsers: the prompt token is its credential, and the body must reach it unread.
 */
export function modelGatewayHandler(options: {
  settings: ModelGatewaySettings;
  store: ResourceStore;
  readModel: ReadModel;
  executors: ExecutorCatalog;
  installationKey: InstallationKey;
  metrics: Registry;
  now: () => Date;
}): RequestHandler {
  const { settings } = options;
  const gateway = new ModelGateway({
    store: options.store,
    readModel: options.readModel,
    executors: options.executors,
    tokens: new PromptTokens(options.installationKey),
    prices: settings.prices ?? new ModelPrices(),
    metrics: new GatewayMetrics(options.metrics),
    upstreams: settings.upstreams ?? {},
    keyFallback: settings.keyFallback ?? {},
    now: options.now,
    ...(settings.maxBodyBytes === undefined ? {} : { maxBodyBytes: settings.maxBodyBytes }),
    ...(settings.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: settings.idleTimeoutMs }),
  });
  return (req, res, next) => {
    gateway.handle(req, res, req.log).catch(next);
  };
}
