import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { InstallationKey } from '../../platform/installation-key.js';
import { ApiError } from '../errors.js';
import { TaskRecordSchema, presentTask } from './present.js';
import type { ReadModel } from '../read-model.js';
import { isDeleted, taskPresentation } from './access.js';

export interface ShareLinkOptions {
  readModel: ReadModel;
  installationKey: InstallationKey;
  publicUrl: string;
}

/**
 * GET /v1/share/:token (docs/api.md#tasks): a public task, read-only, without an API key. The token
 * is `<shareId>.<mac>`: a forged or revoked one (the task made private, which drops its share id)
 * and a task no longer public or deleted all answer the same 404.
 */
export function shareLink(options: ShareLinkOptions): RequestHandler {
  const presentation = taskPresentation(options);
  return function readSharedTask(req: Request, res: Response): void {
    const token = req.params.token;
    const shareId = typeof token === 'string' ? options.installationKey.verifyShareToken(token) : undefined;
    const task = shareId === undefined ? undefined : options.readModel.taskByShareId(shareId);
    if (task === undefined || task.spec.visibility !== 'public' || isDeleted(task)) {
      throw ApiError.notFound('Shared task');
    }
    res.json(presentTask(task, presentation));
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Adds the share link to the OpenAPI document: it is no defineRoute (those all need a key and a
 * scope), so the generator does not see it; it is documented with `security: []` instead.
 */
export function withShareLinkPath(document: Record<string, unknown>): Record<string, unknown> {
  const record = z.toJSONSchema(TaskRecordSchema, { io: 'output', unrepresentable: 'any' });
  delete record.$schema; // the document's dialect is OpenAPI 3.1's
  const operation = {
    operationId: 'readSharedTask',
    summary: 'Read a public task through its share link, without an API key',
    tags: ['Tasks'],
    security: [],
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    responses: {
      200: { description: 'The task', content: { 'application/json': { schema: record } } },
      404: { description: 'No such public task (a forged, revoked or deleted link)' },
    },
  };
  const paths = isRecord(document.paths) ? document.paths : {};
  return { ...document, paths: { ...paths, '/v1/share/{token}': { get: operation } } };
}
