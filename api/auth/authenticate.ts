import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors.js';
import { refuseCrossSiteMutation } from '../web/csrf.js';
import { presentedSessionCookie } from '../web/session-cookie.js';
import type { WebSessions } from '../web/web-pages.js';
import type { KeyResolver } from './key-resolver.js';
import { setPrincipal } from './principal.js';
import type { PromptAccessCheck } from '../model-gateway/prompt-access.js';
import { presentedPromptToken, promptTokenPrincipal } from './prompt-token.js';

/** docs/api.md#authentication: the key travels in `API_KEY`, `api-key` or `x-api-key`, in any letter case. */
export const KEY_HEADERS = ['api_key', 'api-key', 'x-api-key'] as const;

export function presentedApiKey(req: Request): string | undefined {
  for (const header of KEY_HEADERS) {
    const value = req.headers[header];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined && first.trim() !== '') return first.trim();
  }
  return undefined;
}

export interface AuthenticateOptions {
  keys: KeyResolver;
  /** The web pages' sessions (docs/api.md#web-pages): a cookie stands for its key when no key header is sent. */
  sessions?: WebSessions;
  /** Checks workspaces' prompt tokens, which stand for their organization on the lake's reads only; omitted: refused. */
  promptTokens?: PromptAccessCheck;
}

/**
 * Resolves the caller (key, user, scopes, organization) or answers 401: from a workspace's prompt
 * token (a promise: its task is read through), else the API key header, else the session cookie,
 * whose mutations must also pass the CSRF check (403 otherwise).
 */
export function authenticate(options: AuthenticateOptions): RequestHandler {
  return function authenticateCaller(req: Request, _res: Response, next: NextFunction): Promise<void> | void {
    const key = presentedApiKey(req);
    const promptToken = presentedPromptToken(req, key);
    if (promptToken !== undefined) {
      if (options.promptTokens === undefined)
        throw new ApiError('invalid_api_key', 'Prompt tokens are not accepted here');
      return promptTokenPrincipal(options.promptTokens, promptToken).then((principal) => {
        setPrincipal(req, principal);
        next();
      });
    }
    if (key !== undefined) {
      setPrincipal(req, options.keys.byKey(key).principal);
      next();
      return;
    }
    const cookie = options.sessions === undefined ? undefined : presentedSessionCookie(req);
    if (options.sessions === undefined || cookie === undefined) {
      throw new ApiError('missing_api_key', 'An API key is required in the API_KEY header');
    }
    const session = options.keys.bySession(options.sessions.cookies, cookie);
    if (session === undefined) {
      throw new ApiError('invalid_api_key', 'The session has ended; sign in again');
    }
    refuseCrossSiteMutation(req, options.sessions.ownOrigin);
    setPrincipal(req, session.principal);
    next();
  };
}
