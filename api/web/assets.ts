import { join } from 'node:path';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { setPageSecurityHeaders } from './security-headers.js';

export const ASSETS_PATH = '/ui/assets';

/** Vite names every asset by its content's hash: a name never changes meaning, so caches keep it a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * GET /ui/assets/<file>: the built scripts and styles, cached immutable. serve-static refuses paths
 * outside the directory and dot-files, lists no directory and redirects nothing; anything it does
 * not have falls through to the 404 of the API.
 */
export function assetRoutes(webRoot: string): Router {
  const router = express.Router();
  const serve = express.static(join(webRoot, 'assets'), {
    index: false,
    redirect: false,
    dotfiles: 'ignore',
    fallthrough: true,
    cacheControl: false,
    setHeaders: (res) => {
      res.setHeader('Cache-Control', IMMUTABLE);
    },
  });
  router.use(ASSETS_PATH, (req: Request, res: Response, next: NextFunction) => {
    setPageSecurityHeaders(res);
    serve(req, res, next);
  });
  return router;
}
