import type { IncomingMessage } from 'node:http';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? '0') > 0;

/**
 * JSON in: a body must be `application/json` (415 otherwise) and at most `limit` bytes (413).
 * Bodiless POSTs (cancel, start, stop) are fine. `skip` exempts routes that take other media
 * (multipart uploads, signed uploads).
 */
export function jsonBody(options: {
  limit: string;
  skip?: (req: IncomingMessage) => boolean;
}): RequestHandler[] {
  const wantsJson = (req: IncomingMessage): boolean =>
    options.skip?.(req) !== true && METHODS_WITH_BODY.has(req.method ?? '') && hasBody(req);
  const requireJson = function requireJsonContentType(
    req: Request,
    _res: Response,
    next: NextFunction,
  ): void {
    if (wantsJson(req) && typeof req.is('application/json') !== 'string') {
      throw new ApiError('unsupported_media_type', 'Request bodies must be application/json');
    }
    next();
  };
  const parse = express.json({ limit: options.limit, strict: true, type: wantsJson });
  return [requireJson, parse];
}
