import express from 'express';
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { Logger } from '../../platform/log.js';
import {
  DispatchPromptRequestSchema,
  RunnerIdSchema,
  RunnerTaskIdSchema,
} from '../../platform/runner-protocol.js';
import type { EventFilter, TaskEventLog } from '../event-log.js';
import type { PromptQueue } from '../prompt-queue.js';
import { streamTaskEvents } from '../sse.js';
import { filenameProblem } from '../workspace-prep.js';

/** A 100,000-character prompt, escaped, plus the executor's settings and 100 signed URLs. */
export const DISPATCH_BODY_LIMIT = '1536kb';

export interface TaskRoutesOptions {
  queue: PromptQueue;
  events: TaskEventLog;
  logger: Logger;
  keepaliveMs: number;
}

const PromptParamsSchema = z.object({ taskId: RunnerTaskIdSchema, promptId: RunnerIdSchema });
const TaskParamsSchema = z.object({ taskId: RunnerTaskIdSchema });

/** The protocol's schema, plus the rule that every file lands inside the working directory. */
const DispatchBodySchema = DispatchPromptRequestSchema.superRefine((body, ctx) => {
  body.files.forEach((file, index) => {
    const problem = filenameProblem(file.filename);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', path: ['files', index, 'filename'], message: problem });
  });
});

const EventsQuerySchema = z.object({
  after: z.coerce.number().int().min(-1).optional(),
  promptId: RunnerIdSchema.optional(),
});
const LastEventIdSchema = z.object({ 'last-event-id': z.coerce.number().int().min(0).optional() });

/** Parses or answers 400 validation_error with every problem; undefined when it answered. */
function parseOr400<T extends z.ZodType>(schema: T, value: unknown, res: Response): z.output<T> | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  res.status(400).json({
    error: {
      code: 'validation_error',
      message: 'The request is not valid',
      details: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    },
  });
  return undefined;
}

/** The task and the filter of GET events, or undefined when it answered 400. */
function parseEventsRequest(
  req: Request,
  res: Response,
): { taskId: string; filter: EventFilter } | undefined {
  const params = parseOr400(TaskParamsSchema, req.params, res);
  if (params === undefined) return undefined;
  const query = parseOr400(EventsQuerySchema, req.query, res);
  if (query === undefined) return undefined;
  const header = parseOr400(LastEventIdSchema, { 'last-event-id': req.headers['last-event-id'] }, res);
  if (header === undefined) return undefined;
  // A resuming client may send both; the larger is the later position.
  const after = Math.max(query.after ?? -1, header['last-event-id'] ?? -1);
  return { taskId: params.taskId, filter: { after, promptId: query.promptId } };
}

const notFound = (res: Response, taskId: string, promptId: string): void => {
  res.status(404).json({
    error: { code: 'not_found', message: `Prompt ${promptId} of task ${taskId} was never dispatched` },
  });
};

/** The runner's task routes (platform/runner-protocol.ts): a thin adapter over the queue and the log. */
export function taskRoutes(options: TaskRoutesOptions): Router {
  const { queue, events } = options;
  const router = express.Router();

  router.put(
    '/v1/tasks/:taskId/prompts/:promptId',
    express.json({ limit: DISPATCH_BODY_LIMIT }),
    async function dispatchPrompt(req: Request, res: Response) {
      const params = parseOr400(PromptParamsSchema, req.params, res);
      if (params === undefined) return;
      if (!req.is('application/json')) {
        res.status(415).json({
          error: { code: 'unsupported_media_type', message: 'Send the prompt as application/json' },
        });
        return;
      }
      const body = parseOr400(DispatchBodySchema, req.body, res);
      if (body === undefined) return;
      const { created, state } = await queue.dispatch(params.taskId, params.promptId, body);
      res.status(created ? 201 : 200).json(state);
    },
  );

  router.get('/v1/tasks/:taskId/prompts/:promptId', function getPrompt(req: Request, res: Response) {
    const params = parseOr400(PromptParamsSchema, req.params, res);
    if (params === undefined) return;
    const state = queue.get(params.taskId, params.promptId);
    if (state === undefined) notFound(res, params.taskId, params.promptId);
    else res.json(state);
  });

  router.post(
    '/v1/tasks/:taskId/prompts/:promptId/cancel',
    async function cancelPrompt(req: Request, res: Response) {
      const params = parseOr400(PromptParamsSchema, req.params, res);
      if (params === undefined) return;
      const state = await queue.cancel(params.taskId, params.promptId);
      if (state === undefined) notFound(res, params.taskId, params.promptId);
      else res.json(state);
    },
  );

  router.get('/v1/tasks/:taskId/events', async function getEvents(req: Request, res: Response) {
    const parsed = parseEventsRequest(req, res);
    if (parsed === undefined) return;
    const { taskId, filter } = parsed;
    if ((req.headers.accept ?? '').includes('text/event-stream')) {
      const { keepaliveMs, logger } = options;
      await streamTaskEvents(res, { events, taskId, filter, keepaliveMs, logger });
      return;
    }
    res.json(await events.read(taskId, filter));
  });

  return router;
}
