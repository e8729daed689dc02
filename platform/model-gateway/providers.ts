import { z } from 'zod';

/**
 * The model providers the gateway forwards to (docs/model-gateway.md). Each CLI is pointed at the
 * gateway through its documented base-URL variable; the gateway forwards to the provider's real
 * endpoint with the organization's key in the provider's own header.
 */
export const ModelProviderSchema = z.enum(['anthropic', 'openai', 'gemini']);
export type ModelProvider = z.infer<typeof ModelProviderSchema>;

/** Where the gateway answers: `<API URL>/model-gateway/<provider>/...`. */
export const MODEL_GATEWAY_PATH = '/model-gateway';

export interface ProviderConvention {
  /** The provider's public endpoint (the installation may point elsewhere: AGENTRY_MODEL_UPSTREAMS). */
  defaultUpstream: string;
  /**
   * What the CLIs' base-URL variables hold, after the gateway's own prefix: the OpenAI SDKs expect
   * `/v1` in the base URL, the Anthropic and Google ones add their version themselves.
   */
  baseUrlSuffix: string;
  /** Headers a client may carry its key in (the gateway reads the prompt token from them, and replaces it). */
  keyHeaders: readonly string[];
}

export const PROVIDER_CONVENTIONS: Readonly<Record<ModelProvider, ProviderConvention>> = {
  // Claude Code: ANTHROPIC_BASE_URL (no /v1), ANTHROPIC_API_KEY as x-api-key, or a bearer token.
  anthropic: {
    defaultUpstream: 'https://api.anthropic.com',
    baseUrlSuffix: '',
    keyHeaders: ['x-api-key', 'authorization'],
  },
  // Codex and the OpenAI SDKs: OPENAI_BASE_URL including /v1, the key as a bearer token.
  openai: { defaultUpstream: 'https://api.openai.com', baseUrlSuffix: '/v1', keyHeaders: ['authorization'] },
  // Gemini CLI (@google/genai): GOOGLE_GEMINI_BASE_URL, the key in x-goog-api-key (or ?key=).
  gemini: {
    defaultUpstream: 'https://generativelanguage.googleapis.com',
    baseUrlSuffix: '',
    keyHeaders: ['x-goog-api-key'],
  },
};

/** The base URL a CLI in a workspace is given for `provider`, from the gateway URL workspaces reach. */
export const gatewayBaseUrl = (gatewayUrl: string, provider: ModelProvider): string =>
  `${gatewayUrl.replace(/\/+$/, '')}${MODEL_GATEWAY_PATH}/${provider}${PROVIDER_CONVENTIONS[provider].baseUrlSuffix}`;
