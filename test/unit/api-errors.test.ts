import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { ApiError, errorBody, errorShapeOfPath, statusOf } from '../../api/errors.js';
import type { ApiErrorCode } from '../../api/errors.js';
import { REDACTED_PATH, withoutEnginePaths } from '../../api/server-paths.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('API errors', () => {
  it.each<[ApiErrorCode, number]>([
    ['missing_api_key', 401],
    ['invalid_api_key', 401],
    ['insufficient_scopes', 403],
    ['forbidden', 403],
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

describe('server paths in error texts', () => {
  it('never shows a path under the working, temporary or home directory, in the message or the details', () => {
    const dataFile = join(tmpdir(), 'agentry-data', 'objects', 'orgs', 'x.jsonl');
    const error = new ApiError('service_unavailable', `cannot open ${dataFile}: EACCES`, [
      { path: 'from', message: `${join(process.cwd(), 'data', 'store')} is locked` },
    ]);
    const text = JSON.stringify([errorBody(error, 'task'), errorBody(error, 'lake')]);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain(process.cwd());
    expect(text).toContain(`cannot open ${REDACTED_PATH}: EACCES`);
  });

  it('keeps URL paths and relative names as they are', () => {
    const error = new ApiError('not_found', 'No route for TRACE /v1/tasks/abc/events (see data/x.csv)');
    expect(errorBody(error, 'task')).toEqual({
      error: { code: 'not_found', message: 'No route for TRACE /v1/tasks/abc/events (see data/x.csv)' },
    });
  });

  it("drops an engine message's own absolute paths but keeps those the client's query named", () => {
    const message =
      'Out of Memory Error: could not write /data/lake/spill/duckdb_temp_block-4.block; reading "/datasets/orders/a.parquet"';
    const query = "SELECT * FROM read_parquet('/datasets/orders/a.parquet')";
    expect(withoutEnginePaths(message, query)).toBe(
      `Out of Memory Error: could not write ${REDACTED_PATH}; reading "/datasets/orders/a.parquet"`,
    );
  });
});
