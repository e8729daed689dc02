import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { organizationNamespace } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import { apiKeyIdOfHash, apiKeySecretName, cachedApiKeyReader, checkApiKey, hashApiKey } from './api-keys.js';
import { setPrincipal } from './principal.js';

/** docs/api.md#authentication: the key travels in `API_KEY`, `api-key` or `x-api-key`, in any letter case. */
const KEY_HEADERS = ['api_key', 'api-key', 'x-api-key'] as const;

export function presentedApiKey(req: Request): string | undefined {
  for (const header of KEY_HEADERS) {
    const value = req.headers[header];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first.trim() !== '') return first.trim();
  }
  return undefined;
}

export interface AuthenticateOptions {
  readModel: ReadModel;
  controlNamespace: string;
  now?: () => Date;
}

/** Resolves the API key to a principal (key, user, scopes, organization) or answers 401. */
export function authenticate(options: AuthenticateOptions): RequestHandler {
  const now = options.now ?? (() => new Date());
  const readKey = cachedApiKeyReader();
  return function authenticateApiKey(req: Request, _res: Response, next: NextFunction): void {
    const key = presentedApiKey(req);
    if (key === undefined) {
      throw new ApiError('missing_api_key', 'An API key is required in the API_KEY header');
    }
    const hash = hashApiKey(key);
    const keyId = apiKeyIdOfHash(hash);
    const secret = options.readModel.apiKeys.get(options.controlNamespace, apiKeySecretName(keyId));
    const check = checkApiKey(hash, secret, now(), readKey);
    if (!check.ok) {
      throw new ApiError(
        'invalid_api_key',
        check.reason === 'expired' ? 'The API key has expired' : 'The API key is invalid',
      );
    }
    const organization = options.readModel.organizations.get(undefined, check.key.organization);
    if (organization?.metadata.deletionTimestamp !== undefined || organization === undefined) {
      throw new ApiError('invalid_api_key', 'The API key is invalid');
    }
    setPrincipal(req, {
      keyId,
      user: check.key.user,
      scopes: check.key.scopes,
      organization,
      namespace: organizationNamespace(organization),
    });
    next();
  };
}
