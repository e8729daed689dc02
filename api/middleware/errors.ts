import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { ApiError, errorBody, errorShapeOfPath } from '../errors.js';

/** body-parser's errors carry a `type`; these are the client's mistakes, not ours. */
const BodyParserErrorSchema = z.object({ type: z.string() });

function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const parsed = BodyParserErrorSchema.safeParse(err);
  if (!parsed.success) return undefined;
  switch (parsed.data.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', 'The request body is too large');
    case 'entity.parse.failed':
      return new ApiError('validation_error', 'The request body is not valid JSON', [
        { path: '', message: 'malformed JSON' },
      ]);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'Unsupported body encoding or charset');
    case 'request.aborted':
      return new ApiError('validation_error', 'The request body was cut short');
    default:
      return undefined;
  }
}

/**
 * The last error handler: known errors answer in the documented shape; anything else is a 500
 * whose cause goes to the log with the request id, never into the response.
 */
export function errorHandler() {
  return function answerError(err: unknown, req: Request, res: Response, _next: NextFunction): void {
    const known = toApiError(err);
    const error = known ?? new ApiError('internal_error', 'Internal server error');
    if (known === undefined) {
      req.log.error({ err, reqId: req.id }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(error.status).json(errorBody(error, errorShapeOfPath(req.path)));
  };
}

/** Unknown routes: 404 `not_found` in the shape of the API they fell under. */
export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(new ApiError('not_found', `No route for ${req.method} ${req.path}`));
}
