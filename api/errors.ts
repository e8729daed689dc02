import { z } from 'zod';
import { withoutServerPaths } from './server-paths.js';

/** Every error code the API answers with (docs/api.md#errors). A closed union. */
export type ApiErrorCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'insufficient_scopes'
  | 'forbidden'
  | 'subscription_required'
  | 'validation_error'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'limit_exceeded'
  | 'agent_disabled'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'request_header_fields_too_large'
  | 'sql_error'
  | 'timeout'
  | 'not_applied'
  | 'busy'
  | 'bad_gateway'
  | 'service_unavailable'
  | 'internal_error';

/** The HTTP status of each code; a Record, so the compiler insists every code has one. */
const STATUS_OF_CODE: Record<ApiErrorCode, number> = {
  validation_error: 400,
  limit_exceeded: 400,
  sql_error: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_scopes: 403,
  forbidden: 403,
  subscription_required: 403,
  agent_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_header_fields_too_large: 431,
  busy: 429,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  timeout: 504,
  not_applied: 504,
};

export const statusOf = (code: ApiErrorCode): number => STATUS_OF_CODE[code];

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error class of the API: a code from the closed union, a message safe to show. */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get status(): number {
    return statusOf(this.code);
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} not found`);
  }

  static validation(issues: readonly z.core.$ZodIssue[], prefix?: string): ApiError {
    const details = issues.map((issue) => ({
      path: [prefix, ...issue.path.map(String)].filter((part) => part !== undefined && part !== '').join('.'),
      message: issue.message,
    }));
    const first = details[0];
    const summary = first === undefined ? 'invalid request' : `${first.path || 'body'}: ${first.message}`;
    return new ApiError('validation_error', `Request validation failed: ${summary}`, details);
  }
}

/** The two error body shapes of docs/api.md#errors: the task API's and the context lake's. */
export type ErrorShape = 'task' | 'lake';

const ErrorDetailSchema = z.object({ path: z.string(), message: z.string() });

/** docs/api.md#errors: the task API's error body (`details` on validation). For the document. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.array(ErrorDetailSchema).optional() }),
});

/** docs/api.md#errors: the data-context API's error body (`errors` on validation). For the document. */
export const LakeErrorBodySchema = z.object({
  error: z.string(),
  code: z.string(),
  errors: z.array(ErrorDetailSchema).optional(),
});

/** The body of an error response; its texts never carry this server's paths (withoutServerPaths). */
export function errorBody(error: ApiError, shape: ErrorShape): Record<string, unknown> {
  const message = withoutServerPaths(error.message);
  const details = error.details?.map((detail) => ({
    ...detail,
    message: withoutServerPaths(detail.message),
  }));
  if (shape === 'lake') {
    return { error: message, code: error.code, ...(details === undefined ? {} : { errors: details }) };
  }
  return { error: { code: error.code, message, ...(details === undefined ? {} : { details }) } };
}

export const errorShapeOfPath = (path: string): ErrorShape =>
  path === '/v1/context-lake' || path.startsWith('/v1/context-lake/') ? 'lake' : 'task';
