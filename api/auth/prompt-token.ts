import type { Request } from 'express';
import { ApiError } from '../errors.js';
import type { PromptAccessCheck } from '../model-gateway/prompt-access.js';
import type { Principal } from './principal.js';
import type { Scope } from './scopes.js';

/** What a prompt token's caller may do, besides being limited to the routes that declare `promptToken`. */
const PROMPT_TOKEN_SCOPES: readonly Scope[] = ['context-lake:read', 'context-lake:sql'];

/** The prompt tokens' prefix (platform/model-gateway/token.ts): an API key never starts with it. */
const PROMPT_TOKEN_PREFIX = 'agp1.';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The prompt token a workspace client sent (docs/api.md#prompt-tokens): as `Authorization: Bearer`,
 * or in an API key header (a client of the hosted service sends its credential there).
 */
export function presentedPromptToken(
  req: Request,
  apiKeyHeaderValue: string | undefined,
): string | undefined {
  if (apiKeyHeaderValue?.startsWith(PROMPT_TOKEN_PREFIX) === true) return apiKeyHeaderValue;
  const authorization = req.headers.authorization;
  const bearer = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  return bearer?.startsWith(PROMPT_TOKEN_PREFIX) === true ? bearer : undefined;
}

/**
 * The caller a prompt token stands for while its prompt is live: the organization of the token's
 * namespace, reading its context lake and nothing else. A forged, expired or ended token is a 401
 * that does not say which (the prompt's end is the token's revocation, docs/adr/0009).
 */
export async function promptTokenPrincipal(check: PromptAccessCheck, token: string): Promise<Principal> {
  const access = await check.check(token);
  if (access === undefined)
    throw new ApiError('invalid_api_key', 'The prompt token is invalid, or its prompt has ended');
  const { claims, organization } = access;
  return {
    keyId: 'prompt-token',
    user: `task/${claims.task}`,
    scopes: PROMPT_TOKEN_SCOPES,
    organization,
    namespace: claims.namespace,
    prompt: { task: claims.task, prompt: claims.prompt },
  };
}
