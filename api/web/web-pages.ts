import express from 'express';
import type { Router } from 'express';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { KeyResolver } from '../auth/key-resolver.js';
import { assetRoutes } from './assets.js';
import { ownOriginOf } from './csrf.js';
import { defaultWebRoot, pageNegotiation, pageRoutes } from './pages.js';
import { SessionCookies } from './session-cookie.js';
import { DEFAULT_SESSION_TTL_MS, sessionRoutes } from './session-routes.js';

/** How the web pages' sessions are checked: the cookie's signer and the origin mutations must come from. */
export interface WebSessions {
  cookies: SessionCookies;
  ownOrigin: string;
}

export const webSessions = (options: {
  installationKey: InstallationKey;
  publicUrl: string;
}): WebSessions => ({
  cookies: new SessionCookies(options.installationKey),
  ownOrigin: ownOriginOf(options.publicUrl),
});

export interface WebPagesOptions {
  keys: KeyResolver;
  sessions: WebSessions;
  publicUrl: string;
  /** The built pages; default: dist/web of this installation. */
  webRoot?: string | undefined;
  /** How long a session lasts; 12 h when omitted. */
  uiSessionTtlMs?: number | undefined;
}

/**
 * Everything the web pages need of the server but the JSON API (docs/api.md#web-pages), in the
 * order it must run: a browser following a task's url or shareUrl is sent to its page before any
 * JSON route answers; then the app shell, its assets and /ui/session.
 */
export function webPages(options: WebPagesOptions): Router {
  const webRoot = options.webRoot ?? defaultWebRoot();
  const router = express.Router();
  router.use(pageNegotiation());
  router.use(pageRoutes(webRoot));
  router.use(assetRoutes(webRoot));
  router.use(
    sessionRoutes({
      keys: options.keys,
      ...options.sessions,
      secure: new URL(options.publicUrl).protocol === 'https:',
      ttlMs: options.uiSessionTtlMs ?? DEFAULT_SESSION_TTL_MS,
    }),
  );
  return router;
}
