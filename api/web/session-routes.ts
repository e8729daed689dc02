import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import type { KeyResolver, ResolvedKey } from '../auth/key-resolver.js';
import { ApiError } from '../errors.js';
import { refuseCrossSiteMutation, refuseOtherOrigins } from './csrf.js';
import { expiredSessionCookieHeader, presentedSessionCookie, sessionCookieHeader } from './session-cookie.js';
import type { SessionCookies } from './session-cookie.js';

export const SESSION_PATH = '/ui/session';

/** How long a session lasts unless its key expires first (AGENTRY_UI_SESSION_TTL). */
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const SignInSchema = z.object({ apiKey: z.string().trim().min(1).max(1024) });

export interface SessionRoutesOptions {
  keys: KeyResolver;
  cookies: SessionCookies;
  /** The origin of the server's public URL; sign-in from any other is refused (login CSRF). */
  ownOrigin: string;
  /** The public URL is https: the cookie is sent over https only. */
  secure: boolean;
  ttlMs: number;
}

/** What the pages learn of a session: never the key, only whose it is and what it may do. */
const sessionBody = (resolved: ResolvedKey, expiresAt: Date) => ({
  organization: resolved.principal.organization.metadata.name,
  scopes: resolved.principal.scopes,
  expiresAt: expiresAt.toISOString(),
});

/** The session ends with the TTL, or earlier with its key. */
function sessionEnd(resolved: ResolvedKey, now: Date, ttlMs: number): Date {
  const ttlEnd = now.getTime() + ttlMs;
  const keyEnd = resolved.keyExpiresAt === undefined ? ttlEnd : Date.parse(resolved.keyExpiresAt);
  return new Date(Math.min(ttlEnd, keyEnd));
}

const noSession = (): ApiError => new ApiError('missing_api_key', 'Not signed in');

/**
 * /ui/session (docs/api.md#web-pages): sign in with an API key (the answer sets the HttpOnly session
 * cookie), read who is signed in, sign out. Not part of /v1 and not in the OpenAPI document.
 */
export function sessionRoutes(options: SessionRoutesOptions): Router {
  const router = express.Router();

  const refuseForeignSignIn = (req: Request, res: Response, next: NextFunction): void => {
    res.set('Cache-Control', 'no-store');
    refuseOtherOrigins(req, options.ownOrigin);
    if (typeof req.is('application/json') !== 'string') {
      throw new ApiError('unsupported_media_type', 'Request bodies must be application/json');
    }
    next();
  };
  router.post(SESSION_PATH, refuseForeignSignIn, express.json({ limit: '8kb', strict: true }));
  router.post(SESSION_PATH, (req: Request, res: Response) => {
    const parsed = SignInSchema.safeParse(req.body);
    if (!parsed.success) throw ApiError.validation(parsed.error.issues);
    const resolved = options.keys.byKey(parsed.data.apiKey);
    const now = options.keys.now();
    const end = sessionEnd(resolved, now, options.ttlMs);
    const value = options.cookies.sign(resolved.principal.keyId, resolved.keyUid, {
      issuedAt: now,
      expiresAt: end,
    });
    // The cookie's expiry is whole seconds; the answer says the same instant.
    const claimed = options.cookies.read(value, now)?.expiresAt ?? end;
    const maxAge = (claimed.getTime() - now.getTime()) / 1000;
    res.set('Set-Cookie', sessionCookieHeader(value, maxAge, options.secure));
    res.status(200).json(sessionBody(resolved, claimed));
  });

  router.get(SESSION_PATH, (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const cookie = presentedSessionCookie(req);
    const session = cookie === undefined ? undefined : options.keys.bySession(options.cookies, cookie);
    if (session === undefined) throw noSession();
    res.status(200).json(sessionBody(session, session.sessionExpiresAt));
  });

  // Signing out ends the key's sessions everywhere (a copied cookie too), then drops this cookie.
  router.delete(SESSION_PATH, async (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    refuseCrossSiteMutation(req, options.ownOrigin);
    const cookie = presentedSessionCookie(req);
    if (cookie !== undefined) await options.keys.endSessions(options.cookies, cookie);
    res.set('Set-Cookie', expiredSessionCookieHeader(options.secure));
    res.status(204).end();
  });

  return router;
}
