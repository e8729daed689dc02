import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? '0') > 0;

/**
 * JSON in: a body must be `application/json` (415 otherwise) and at most `limit` bytes (413).
 * Bodiless POSTs (cancel, start, stop) are fine. `skip` exempts routes that take other media
 * (multipart uploads, signed uploads).
 */
export function jsonBody(options: { limit: string; skip?: (req: Request) => boolean }): RequestHandler {
  const parse = express.json({ limit: options.limit, strict: true, type: () => true });
  return function parseJsonBody(req: Request, res: Response, next: NextFunction): void {
    if (options.skip?.(req) === true || !METHODS_WITH_BODY.has(req.method) || !hasBody(req)) {
      next();
      return;
    }
    if (typeof req.is('application/json') !== 'string') {
      throw new ApiError('unsupported_media_type', 'Request bodies must be application/json');
    }
    parse(req, res, next);
  };
}
