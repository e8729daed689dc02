import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../../errors.js';

const ARTIFACT_PATH = /^(\/v1\/workspaces\/[^/?]+\/artifacts\/)([^?]*)(\?.*)?$/;
// Also without `/v1`: under the router mounted at /v1, that part is stripped from req.url.
const UPLOAD_PATH = /^(\/v1)?\/workspaces\/[^/?]+\/artifacts\/?(\?.*)?$/;

/** POST /v1/workspaces/:id/artifacts: its multipart body must reach the route unread (jsonBody's `skip`). */
export const isArtifactUpload = (req: IncomingMessage): boolean =>
  req.method === 'POST' && UPLOAD_PATH.test(req.url ?? '');

/**
 * Lets a client write an artifact's path with plain slashes (`/artifacts/reports/q1.csv`) as well as
 * encoded (`/artifacts/reports%2Fq1.csv`): the route has one `:filename` segment, so slashes after
 * `/artifacts/` are re-encoded before routing. The rest is left percent-encoded for the router to
 * decode (and the filename rules to judge): `%2e%2e/x` becomes `../x` and is refused, not resolved.
 * A malformed escape is a 400 here rather than the router's unexplained failure.
 */
export function artifactPaths(req: Request, _res: Response, next: NextFunction): void {
  const match = ARTIFACT_PATH.exec(req.url);
  if (match === null) {
    next();
    return;
  }
  const [, head = '', rest = '', query = ''] = match;
  try {
    decodeURIComponent(rest);
  } catch {
    next(
      new ApiError('validation_error', 'The artifact filename is not validly URL-encoded', [
        { path: 'params.filename', message: 'malformed percent-encoding' },
      ]),
    );
    return;
  }
  if (rest.includes('/')) req.url = `${head}${rest.replaceAll('/', '%2F')}${query}`;
  next();
}
