import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { setPageSecurityHeaders } from './security-headers.js';

/** The paths the app shell answers (web/src/app.tsx routes the same list). */
export const PAGE_PATHS = ['/', '/login', '/tasks/:id', '/share/:token', '/workspaces', '/lake'] as const;

/**
 * Where `vite build` writes the pages: `dist/web`, found from this module's own place whether it
 * runs compiled (`dist/api/web/pages.js`) or from source (`api/web/pages.ts`, under tests).
 */
export function defaultWebRoot(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return /[\\/]dist[\\/]?$/.test(root) ? join(root, 'web') : join(root, 'dist', 'web');
}

/**
 * Whether the client would rather have HTML than JSON: a browser navigating (its Accept names
 * text/html); API clients send JSON, a wildcard or nothing, and always get JSON.
 */
export const prefersHtml = (req: Request): boolean =>
  req.accepts(['application/json', 'text/html']) === 'text/html';

/**
 * Hands only GETs (and HEADs) to `router`: an Express router answers OPTIONS for its paths itself,
 * which would shadow the API's own answer (405 with the document's methods) on /v1 paths.
 */
function readsOnly(router: Router): RequestHandler {
  return function passReads(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'GET' || req.method === 'HEAD') router(req, res, next);
    else next();
  };
}

const NOT_BUILT = 'The web pages are not built: run `npm run build` (or `npm start`, which builds them).\n';

/** Answers the app's routes with its shell (index.html), or 503 when the pages were never built. */
export function pageRoutes(webRoot: string): RequestHandler {
  const router = express.Router();
  const shellPath = join(webRoot, 'index.html');
  // Read per request: a rebuild while the server runs changes the hashed asset names the shell names.
  const serveShell = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (!prefersHtml(req)) {
      next();
      return;
    }
    res.vary('Accept');
    setPageSecurityHeaders(res);
    let shell: Buffer;
    try {
      shell = await readFile(shellPath);
    } catch {
      res.status(503).type('text/plain').set('Cache-Control', 'no-store').send(NOT_BUILT);
      return;
    }
    res.status(200).type('html').set('Cache-Control', 'no-cache').send(shell);
  };
  for (const path of PAGE_PATHS) router.get(path, serveShell);
  return readsOnly(router);
}

/** The JSON routes a browser is sent from to a page (pageNegotiation): their answers vary by Accept. */
export const NEGOTIATED_ROUTES = [
  { route: '/v1/tasks/:id', page: '/tasks', param: 'id' },
  { route: '/v1/share/:token', page: '/share', param: 'token' },
] as const;

/**
 * A browser following a task's `url` or `shareUrl` gets 303 to the page showing it; API clients
 * get the JSON as ever. Both answers vary by Accept, so no cache hands one to the other.
 */
export function pageNegotiation(): RequestHandler {
  const router = express.Router();
  const redirect =
    (page: string, param: string) =>
    (req: Request, res: Response, next: NextFunction): void => {
      res.vary('Accept');
      const value = req.params[param];
      if (!prefersHtml(req) || typeof value !== 'string') {
        next();
        return;
      }
      setPageSecurityHeaders(res);
      res.redirect(303, `${page}/${encodeURIComponent(value)}`);
    };
  for (const { route, page, param } of NEGOTIATED_ROUTES) router.get(route, redirect(page, param));
  return readsOnly(router);
}
