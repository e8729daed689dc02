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
 * (multipart uploads, signed uploads). A request without a JSON body (every GET) goes straight on:
 * the parser would only find that out again.
 */
export function jsonBody(options: {
  limit: string;
  skip?: (req: IncomingMessage) => boolean;
}): RequestHandler {
  const wantsJson = (req: IncomingMessage): boolean =>
    options.skip?.(req) !== true && METHODS_WITH_BODY.has(req.method ?? '') && hasBody(req);
  const parse: RequestHandler = express.json({ limit: options.limit, strict: true, type: wantsJson });
  return function readJsonBody(req: Request, res: Response, next: NextFunction): void {
    if (!wantsJson(req)) {
      next();
      return;
    }
    if (typeof req.is('application/json') !== 'string') {
      throw new ApiError('unsupported_media_type', 'Request bodies must be application/json');
    }
    parse(req, res, next);
  };
}
