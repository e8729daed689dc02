import type { NextFunction, Request, Response } from 'express';
import { findPrincipal } from '../auth/principal.js';
import { ApiError } from '../errors.js';

/**
 * docs/api.md#authentication: the context-lake API needs the organization's plan `pro`. Mounted
 * under the /v1/context-lake prefix after authentication, before scopes and validation.
 */
export function requireProPlan(req: Request, _res: Response, next: NextFunction): void {
  const principal = findPrincipal(req);
  if (principal !== undefined && principal.organization.spec.plan !== 'pro') {
    throw new ApiError('subscription_required', 'The context lake needs a Pro subscription');
  }
  next();
}
