import { z } from 'zod';
import { readConfigFile } from './config-file.js';

/**
 * What a model costs, in US dollars per million tokens (docs/model-gateway.md#prices). `model` is a
 * prefix of the model name the provider reports (`claude-sonnet-4` prices `claude-sonnet-4-5-20250929`);
 * the longest matching prefix wins. Cache reads and writes cost the input price when not given.
 */
export const ModelPriceSchema = z.strictObject({
  model: z.string().min(1).max(200),
  inputPerMillion: z.number().min(0),
  outputPerMillion: z.number().min(0),
  cacheReadPerMillion: z.number().min(0).optional(),
  cacheWritePerMillion: z.number().min(0).optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** AGENTRY_MODEL_PRICES_FILE: entries replacing built-ins of the same prefix, or adding to them. */
export const ModelPricesFileSchema = z.strictObject({ prices: z.array(ModelPriceSchema).max(1000) });

const price = (
  model: string,
  inputPerMillion: number,
  outputPerMillion: number,
  cacheReadPerMillion: number,
  cacheWritePerMillion?: number,
): ModelPrice => ({
  model,
  inputPerMillion,
  outputPerMillion,
  cacheReadPerMillion,
  ...(cacheWritePerMillion === undefined ? {} : { cacheWritePerMillion }),
});

/**
 * The providers' published list prices of current model families (standard tier, short context).
 * An installation with other terms names its own in AGENTRY_MODEL_PRICES_FILE.
 */
export const BUILTIN_MODEL_PRICES: readonly ModelPrice[] = [
  // Anthropic: cache writes (5-minute) cost 1.25× input, cache reads 0.1×.
  price('claude-opus-4', 15, 75, 1.5, 18.75),
  price('claude-opus-4-5', 5, 25, 0.5, 6.25),
  price('claude-sonnet-4', 3, 15, 0.3, 3.75),
  price('claude-3-7-sonnet', 3, 15, 0.3, 3.75),
  price('claude-3-5-sonnet', 3, 15, 0.3, 3.75),
  price('claude-haiku-4', 1, 5, 0.1, 1.25),
  price('claude-3-5-haiku', 0.8, 4, 0.08, 1),
  // OpenAI: cached input is read at a discount; there is no write charge.
  price('gpt-5', 1.25, 10, 0.125),
  price('gpt-5-mini', 0.25, 2, 0.025),
  price('gpt-5-nano', 0.05, 0.4, 0.005),
  price('gpt-4.1', 2, 8, 0.5),
  price('gpt-4.1-mini', 0.4, 1.6, 0.1),
  price('gpt-4.1-nano', 0.1, 0.4, 0.025),
  price('gpt-4o', 2.5, 10, 1.25),
  price('gpt-4o-mini', 0.15, 0.6, 0.075),
  price('o3', 2, 8, 0.5),
  price('o4-mini', 1.1, 4.4, 0.275),
  // Google: prompts up to 200k tokens.
  price('gemini-3-pro', 2, 12, 0.2),
  price('gemini-2.5-pro', 1.25, 10, 0.125),
  price('gemini-2.5-flash', 0.3, 2.5, 0.03),
  price('gemini-2.5-flash-lite', 0.1, 0.4, 0.01),
  price('gemini-2.0-flash', 0.1, 0.4, 0.025),
];

/** Token counts of one call, as the gateway read them (inputTokens includes cache reads and writes). */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** The installation's price table: built-ins, replaced or extended by configuration. */
export class ModelPrices {
  /** Longest prefix first, so the first match is the most specific. */
  private readonly entries: readonly ModelPrice[];

  constructor(configured: readonly ModelPrice[] = []) {
    const byPrefix = new Map<string, ModelPrice>();
    for (const entry of [...BUILTIN_MODEL_PRICES, ...configured])
      byPrefix.set(entry.model.toLowerCase(), entry);
    this.entries = [...byPrefix.entries()]
      .sort(([a], [b]) => b.length - a.length)
      .map(([model, entry]) => ({ ...entry, model }));
  }

  /** The price of `model` (its most specific prefix), or undefined when the table does not list it. */
  priceOf(model: string): ModelPrice | undefined {
    // Gemini's REST resources name models `models/<name>`.
    const name = model.toLowerCase().replace(/^models\//, '');
    return this.entries.find((entry) => name.startsWith(entry.model));
  }

  /** The cost of one call in US dollars, or undefined when the model is not priced. */
  costOf(model: string, tokens: TokenCounts): number | undefined {
    const entry = this.priceOf(model);
    if (entry === undefined) return undefined;
    const uncached = Math.max(0, tokens.inputTokens - tokens.cacheReadTokens - tokens.cacheWriteTokens);
    const micros =
      uncached * entry.inputPerMillion +
      tokens.cacheReadTokens * (entry.cacheReadPerMillion ?? entry.inputPerMillion) +
      tokens.cacheWriteTokens * (entry.cacheWritePerMillion ?? entry.inputPerMillion) +
      tokens.outputTokens * entry.outputPerMillion;
    return micros / 1_000_000;
  }
}

/** The price table of AGENTRY_MODEL_PRICES_FILE (unset: the built-ins). */
export async function loadModelPrices(path: string | undefined): Promise<ModelPrices> {
  if (path === undefined) return new ModelPrices();
  return new ModelPrices((await readConfigFile(path, ModelPricesFileSchema, 'model prices')).prices);
}
