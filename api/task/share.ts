import type { Request, RequestHandler, Response } from 'express';
import type { InstallationKey } from '../../platform/installation-key.js';
import { ApiError } from '../errors.js';
import { presentTask } from './present.js';
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
