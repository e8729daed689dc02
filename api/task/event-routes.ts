import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Task } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';
import { findTask, taskAsCached } from './access.js';
import { archivedPromptEvents, isArchived } from './archived-events.js';
import type { TaskRoutesDeps } from './access.js';
import { TaskEventStream } from './event-stream.js';
import { promptEvents } from './runner-access.js';
import {
  PromptEventsSchema,
  PromptIdParamsSchema,
  TaskEventsQuerySchema,
  TaskIdParamsSchema,
  TaskStreamFrameSchema,
} from './schemas.js';

const TAG = 'Tasks';

export type TaskEventsQuery = z.output<typeof TaskEventsQuerySchema>;

/** `Last-Event-ID` as a seq; anything else is ignored (the query's `after` may still give one). */
function lastEventIdOf(req: Request): number | undefined {
  const header = req.get('last-event-id')?.trim();
  return header !== undefined && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}

/**
 * Which prompt a stream follows: the one asked for; none (the whole task) when the client resumes
 * by seq or asks for all; else the latest, so that a client opening the stream after each
 * follow-up sees that turn only, as on the hosted service.
 */
function streamedPrompt(
  task: Task,
  query: TaskEventsQuery,
  resumeAt: number | undefined,
): string | undefined {
  if (query.promptId !== undefined) return query.promptId;
  if (query.all || query.after !== undefined || resumeAt !== undefined) return undefined;
  return task.spec.prompts.at(-1)?.id;
}

/**
 * Streams a task's events as server-sent events until `done`, the client leaving, or `current`
 * no longer giving the task (the caller lost sight of it): GET /tasks/:id/events and the share
 * link's stream serve the same frames.
 */
export async function streamTaskEvents(
  deps: Pick<TaskRoutesDeps, 'readModel' | 'installationKey' | 'sseKeepaliveMs' | 'objectStore'>,
  req: Request,
  res: Response,
  target: { task: Task; query: TaskEventsQuery; current: () => Task | undefined },
): Promise<void> {
  const { task, query } = target;
  if (query.promptId !== undefined && !task.spec.prompts.some((prompt) => prompt.id === query.promptId))
    throw ApiError.notFound('Prompt');
  const resumeAt = lastEventIdOf(req);
  const stream = new TaskEventStream(
    {
      readModel: deps.readModel,
      installationKey: deps.installationKey,
      logger: req.log,
      keepaliveMs: deps.sseKeepaliveMs,
      namespace: task.metadata.namespace ?? '',
      taskId: task.metadata.name,
      promptId: streamedPrompt(task, query, resumeAt),
      // A client may send both; the larger is the later position.
      after: Math.max(query.after ?? -1, resumeAt ?? -1),
      objectStore: deps.objectStore,
      current: target.current,
    },
    res,
  );
  await stream.run();
}

/** GET /tasks/:id/events: server-sent events, written by TaskEventStream itself (the handler returns undefined). */
export const taskEventsRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/tasks/:id/events',
    operationId: 'streamTaskEvents',
    summary:
      "Follow the latest prompt's execution events as server-sent events (resume task-wide with Last-Event-ID or after; all=true replays the whole task)",
    tag: TAG,
    scope: 'tasks:read',
    params: TaskIdParamsSchema,
    query: TaskEventsQuerySchema,
    description:
      'Server-sent events: each `event` frame carries one TaskEvent as `data` and its seq as `id`; the stream ends with one `done` frame once every prompt it follows has finished and its events were sent. `: keepalive` comments keep idle connections open. A reconnecting client sends Last-Event-ID and receives each event exactly once.',
    headers: [
      {
        name: 'Last-Event-ID',
        description: 'Resume after this seq, task-wide (what EventSource sends on reconnecting)',
      },
    ],
    responses: {
      200: {
        description: 'A stream of `event` frames, then one `done` frame',
        mediaType: 'text/event-stream',
        schema: TaskStreamFrameSchema,
        headers: { 'Cache-Control': '`no-cache`: a stream is never served from a cache' },
      },
    },
    handler: async ({ params, query, principal, req, res }) => {
      const task = await findTask(deps.readModel, principal, params.id);
      const current = taskAsCached(deps.readModel, principal, task);
      await streamTaskEvents(deps, req, res, { task, query, current });
      return undefined;
    },
  });

/** GET /tasks/:id/prompts/:promptId/events: one prompt's events so far, as JSON. */
export const promptEventsRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/tasks/:id/prompts/:promptId/events',
    operationId: 'listPromptEvents',
    summary:
      "One prompt's events so far, as JSON (a finished prompt's from its archive, also while the workspace sleeps)",
    tag: TAG,
    scope: 'tasks:read',
    params: PromptIdParamsSchema,
    responses: {
      200: { description: 'The events and the last seq', schema: PromptEventsSchema },
      503: { description: 'The workspace is not running and the prompt is not archived' },
    },
    handler: async ({ params, principal, req }) => {
      const task = await findTask(deps.readModel, principal, params.id);
      if (!task.spec.prompts.some((prompt) => prompt.id === params.promptId))
        throw ApiError.notFound('Prompt');
      const store = deps.objectStore;
      if (store !== undefined && isArchived(task, params.promptId)) {
        try {
          return { status: 200, body: await archivedPromptEvents(store, req.log, task, params.promptId) };
        } catch (err) {
          // Storage is down: the runner still has the log when its workspace is up.
          req.log.warn(
            { err, task: task.metadata.name },
            'reading archived events failed; asking the runner',
          );
        }
      }
      const page = await promptEvents(deps.readModel, deps.installationKey, task, params.promptId);
      return { status: 200, body: page };
    },
  });
