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
}

/** On what the REST API makes (or claims) for a caller: the id of the API key that made it. */
export const OWNER_KEY_LABEL = 'agentry.dev/owner';

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

export function requireScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal.scopes, scope)) {
    throw new ApiError('insufficient_scopes', `This API key lacks the scope ${scope}`);
  }
}
