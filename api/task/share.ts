import type { Request, RequestHandler, Response } from 'express';
import type { Task } from '../../crds/index.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import { ApiError } from '../errors.js';
import { presentTask } from './present.js';
import type { ReadModel } from '../read-model.js';
import { isDeleted, taskPresentation } from './access.js';
import type { TaskRoutesDeps } from './access.js';
import { streamTaskEvents } from './event-routes.js';
import { TaskEventsQuerySchema } from './schemas.js';

export interface ShareLinkOptions {
  readModel: ReadModel;
  installationKey: InstallationKey;
  publicUrl: string;
}

/** Whether the link with this share id still grants the task: public, not deleted, the same share id. */
const grants = (task: Task, shareId: string): boolean =>
  task.spec.visibility === 'public' && !isDeleted(task) && task.spec.shareId === shareId;

/**
 * The task a share token grants, with its share id. The token is `<shareId>.<mac>`: a forged or
 * revoked one (the task made private, which drops its share id) and a task no longer public or
 * deleted all answer the same 404.
 */
function sharedTask(options: ShareLinkOptions, req: Request): { task: Task; shareId: string } {
  const token = req.params.token;
  const shareId = typeof token === 'string' ? options.installationKey.verifyShareToken(token) : undefined;
  const task = shareId === undefined ? undefined : options.readModel.taskByShareId(shareId);
  if (task === undefined || shareId === undefined || !grants(task, shareId)) {
    throw ApiError.notFound('Shared task');
  }
  return { task, shareId };
}

/** GET /v1/share/:token (docs/api.md#tasks): a public task, read-only, without an API key. */
export function shareLink(options: ShareLinkOptions): RequestHandler {
  const presentation = taskPresentation(options);
  return function readSharedTask(req: Request, res: Response): void {
    res.json(presentTask(sharedTask(options, req).task, presentation));
  };
}

/**
 * GET /v1/share/:token/events (docs/api.md#web-pages): the shared task's event stream, exactly as
 * GET /v1/tasks/:id/events serves it (resume with Last-Event-ID), without an API key. It ends as
 * soon as the link stops granting the task (made private, deleted).
 */
export function sharedTaskEvents(
  options: ShareLinkOptions &
    Pick<TaskRoutesDeps, 'readModel' | 'installationKey' | 'sseKeepaliveMs' | 'objectStore'>,
): RequestHandler {
  return async function streamSharedTask(req: Request, res: Response): Promise<void> {
    const { task, shareId } = sharedTask(options, req);
    const query = TaskEventsQuerySchema.safeParse(req.query);
    if (!query.success) throw ApiError.validation(query.error.issues, 'query');
    const { namespace = '', name } = task.metadata;
    await streamTaskEvents(options, req, res, {
      task,
      query: query.data,
      current: () => {
        const latest = options.readModel.tasks.get(namespace, name);
        return latest !== undefined && grants(latest, shareId) ? latest : undefined;
      },
    });
  };
}
