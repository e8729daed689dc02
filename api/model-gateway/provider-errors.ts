import type { ServerResponse } from 'node:http';
import type { ModelProvider } from '../../platform/model-gateway/providers.js';

/** Why the gateway itself answered instead of the provider (each maps onto every provider's own error shape). */
export const GatewayRefusals = {
  /** The prompt token is missing, forged, expired or its prompt has ended; or no key is configured. */
  Unauthorized: 'unauthorized',
  /** The task's or the organization's model budget is reached. */
  BudgetExceeded: 'budget_exceeded',
  /** The request body is over the gateway's limit. */
  TooLarge: 'too_large',
  /** The provider could not be reached, went silent, or the usage could not be recorded. */
  UpstreamError: 'upstream_error',
  /** Not a provider the gateway knows. */
  NotFound: 'not_found',
} as const;
export type GatewayRefusal = (typeof GatewayRefusals)[keyof typeof GatewayRefusals];

interface RefusalShape {
  status: number;
  /** Anthropic's `error.type`. */
  anthropic: string;
  /** OpenAI's `error.type` (its `code` is the refusal). */
  openai: string;
  /** Google's `error.status` (a google.rpc.Code name). */
  gemini: string;
}

const SHAPES: Readonly<Record<GatewayRefusal, RefusalShape>> = {
  unauthorized: {
    status: 401,
    anthropic: 'authentication_error',
    openai: 'invalid_request_error',
    gemini: 'UNAUTHENTICATED',
  },
  budget_exceeded: {
    status: 429,
    anthropic: 'budget_exceeded',
    openai: 'budget_exceeded',
    gemini: 'RESOURCE_EXHAUSTED',
  },
  too_large: {
    status: 413,
    anthropic: 'request_too_large',
    openai: 'invalid_request_error',
    gemini: 'INVALID_ARGUMENT',
  },
  upstream_error: { status: 502, anthropic: 'api_error', openai: 'server_error', gemini: 'UNAVAILABLE' },
  not_found: {
    status: 404,
    anthropic: 'not_found_error',
    openai: 'invalid_request_error',
    gemini: 'NOT_FOUND',
  },
};

/** The body a provider's SDK parses as an error of this kind (so the CLI reports it as it would the provider's). */
export function providerErrorBody(
  provider: ModelProvider,
  refusal: GatewayRefusal,
  message: string,
): unknown {
  const shape = SHAPES[refusal];
  switch (provider) {
    case 'anthropic':
      return { type: 'error', error: { type: shape.anthropic, message } };
    case 'openai':
      return { error: { message, type: shape.openai, code: refusal } };
    case 'gemini':
      return { error: { code: shape.status, message, status: shape.gemini } };
  }
}

/** Answers the call with the refusal in the provider's error shape. */
export function sendProviderError(
  res: ServerResponse,
  provider: ModelProvider,
  refusal: GatewayRefusal,
  message: string,
): void {
  const body = JSON.stringify(providerErrorBody(provider, refusal, message));
  res.writeHead(SHAPES[refusal].status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
