import type { Request } from 'express';
import type { Organization } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import { hasScope } from './scopes.js';
import type { Scope } from './scopes.js';

/** Who is calling: resolved from the API key by the authenticate middleware. */
export interface Principal {
  keyId: string;
  user: string;
  scopes: readonly Scope[];
  organization: Organization;
  /** Where the organization's resources live. */
  namespace: string;
  /**
   * Set when the caller is a workspace's prompt token rather than an API key (docs/api.md#prompt-tokens):
   * its task and prompt. Such a caller reaches only the routes that declare `promptToken`.
   */
  prompt?: { task: string; prompt: string };
}

export { OWNER_KEY_LABEL } from '../../crds/meta.js';

const principals = new WeakMap<object, Principal>();

export const setPrincipal = (req: Request, principal: Principal): void => {
  principals.set(req, principal);
};

/** The caller, if the request got past authentication (for logs). */
export const findPrincipal = (req: object): Principal | undefined => principals.get(req);

/** The caller of an authenticated route; a route that reaches here unauthenticated is a bug. */
export function principalOf(req: Request): Principal {
  const principal = principals.get(req);
  if (principal === undefined) throw new Error('route ran without authentication');
  return principal;
}

/**
 * A prompt token reaches only the routes that say so (the context lake's reads); every other route
 * refuses it as a key without the scope, whatever scopes it carries.
 */
export function requirePromptTokenAllowed(principal: Principal, allowed: boolean): void {
  if (principal.prompt !== undefined && !allowed) {
    throw new ApiError('insufficient_scopes', "A workspace's prompt token may only read the context lake");
  }
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal.scopes, scope)) {
    throw new ApiError('insufficient_scopes', `This API key lacks the scope ${scope}`);
  }
}
