import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ApiError, errorBody, errorShapeOfPath, statusOf } from '../../api/errors.js';
import type { ApiErrorCode } from '../../api/errors.js';

describe('API errors', () => {
  it.each<[ApiErrorCode, number]>([
    ['missing_api_key', 401],
    ['invalid_api_key', 401],
    ['insufficient_scopes', 403],
    ['validation_error', 400],
    ['not_found', 404],
    ['limit_exceeded', 400],
    ['agent_disabled', 403],
    ['internal_error', 500],
    ['payload_too_large', 413],
    ['conflict', 409],
    ['unsupported_media_type', 415],
    ['timeout', 504],
    ['service_unavailable', 503],
    ['subscription_required', 403],
    ['sql_error', 400],
  ])('maps %s to HTTP %i', (code, status) => {
    expect(statusOf(code)).toBe(status);
  });

  it('renders the task API shape with details only for validation errors', () => {
    expect(errorBody(new ApiError('not_found', 'Task not found'), 'task')).toEqual({
      error: { code: 'not_found', message: 'Task not found' },
    });
  });

  it('renders the data-context shape with errors[] for validation', () => {
    const parsed = z.object({ params: z.object({ s3_key: z.string() }) }).safeParse({ params: {} });
    if (parsed.success) throw new Error('expected a failure');
    const body = errorBody(ApiError.validation(parsed.error.issues), 'lake');
    expect(body).toEqual({
      error: expect.stringContaining('params.s3_key'),
      code: 'validation_error',
      errors: [{ path: 'params.s3_key', message: expect.any(String) }],
    });
  });

  it('chooses the data-context shape only under /v1/context-lake', () => {
    expect(errorShapeOfPath('/v1/context-lake/sql')).toBe('lake');
    expect(errorShapeOfPath('/v1/context-lake')).toBe('lake');
    expect(errorShapeOfPath('/v1/context-lakes')).toBe('task');
    expect(errorShapeOfPath('/v1/tasks')).toBe('task');
  });
});
