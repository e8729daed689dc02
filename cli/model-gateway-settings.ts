import type { ModelGatewaySettings } from '../api/model-gateway/routes.js';
import type { Config } from '../platform/config.js';
import { loadModelPrices } from '../platform/model-prices.js';

/**
 * The model gateway's settings of `agentry api` and `agentry serve` (docs/model-gateway.md), or
 * false when AGENTRY_MODEL_GATEWAY is disabled. `keyFallback`: the embedded default's own
 * environment, for key variables without a Secret.
 */
export async function modelGatewaySettingsOf(
  config: Config,
  keyFallback: Readonly<Record<string, string>> = {},
): Promise<ModelGatewaySettings | false> {
  if (config.AGENTRY_MODEL_GATEWAY === 'disabled') return false;
  return {
    upstreams: config.AGENTRY_MODEL_UPSTREAMS,
    prices: await loadModelPrices(config.AGENTRY_MODEL_PRICES_FILE),
    keyFallback,
  };
}
