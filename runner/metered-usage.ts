import { z } from 'zod';
import { ModelUsageSchema } from '../crds/index.js';
import type { ModelUsage } from '../crds/index.js';
import type { Logger } from '../platform/log.js';
import { MODEL_GATEWAY_PATH } from '../platform/model-gateway/providers.js';

/** The model gateway answers within moments; a slower one must not hold the prompt's result back long. */
export const METERED_USAGE_TIMEOUT_MS = 5_000;

/** GET /model-gateway/usage (docs/model-gateway.md): what the gateway counted for the token's prompt and task. */
const GatewayUsageAnswerSchema = z.object({ prompt: ModelUsageSchema.nullable() });

/**
 * What the model gateway counted for one prompt (its `metered` figures, next to the CLI's own
 * `usage` in the `result` event); undefined when it counted nothing or did not answer in time.
 * Never throws: a failure is logged and the result goes out without the figures.
 */
export async function fetchMeteredUsage(
  gateway: { url: string; token: string },
  logger: Logger,
  timeoutMs: number = METERED_USAGE_TIMEOUT_MS,
): Promise<ModelUsage | undefined> {
  const url = `${gateway.url.replace(/\/+$/, '')}${MODEL_GATEWAY_PATH}/usage`;
  try {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${gateway.token}`, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      logger.warn({ status: res.status }, 'the model gateway did not answer the prompt usage');
      return undefined;
    }
    const answer = GatewayUsageAnswerSchema.safeParse(await res.json());
    if (!answer.success) {
      logger.warn('the model gateway answered the prompt usage in an unknown shape');
      return undefined;
    }
    return answer.data.prompt ?? undefined;
  } catch (err) {
    logger.warn({ err }, 'asking the model gateway for the prompt usage failed');
    return undefined;
  }
}
