import type { ModelProvider } from '../../../platform/model-gateway/providers.js';
import { AnthropicUsageReader } from './anthropic.js';
import type { UsageReader } from './call-usage.js';
import { GeminiUsageReader } from './gemini.js';
import { OpenAiUsageReader } from './openai.js';

/** A fresh reader of one call's usage in `provider`'s wire format. */
export function usageReaderFor(provider: ModelProvider): UsageReader {
  switch (provider) {
    case 'anthropic':
      return new AnthropicUsageReader();
    case 'openai':
      return new OpenAiUsageReader();
    case 'gemini':
      return new GeminiUsageReader();
  }
}
