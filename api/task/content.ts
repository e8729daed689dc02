import { z } from 'zod';
import { PromptStatusSchema, TaskStatusValueSchema, isTerminal, promptEntryOf } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { RunnerRequestError } from '../../platform/runner-client.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { presentTask } from './present.js';
import type { PromptRecord } from './present.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';
import { findTask, taskPresentation } from './access.js';
import type { TaskRoutesDeps } from './access.js';
import { isArchived, readArchivedEvents } from './archived-events.js';
import { runnerOf } from './runner-access.js';
import { TaskEventRecordSchema, TaskIdParamsSchema } from './schemas.js';

/** The events of one prompt in the answer: the first ones up to this many (the rest: the prompt's events endpoint). */
export const CONTENT_EVENTS_PER_PROMPT = 1000;
/** The whole answer never waits longer than this for a workspace's runner (one that hangs or is unreachable). */
export const CONTENT_RUNNER_TIMEOUT_MS = 5_000;

/**
 * `complete`: every event of the prompt so far; `truncated`: the first CONTENT_EVENTS_PER_PROMPT;
 * `unavailable`: they live on a workspace that is asleep or did not answer in time.
 */
const EventsStatusSchema = z.enum(['complete', 'truncated', 'unavailable']);
type EventsStatus = z.infer<typeof EventsStatusSchema>;

const ContentPromptSchema = z.object({
  id: z.uuid(),
  status: PromptStatusSchema,
  userPrompt: z.string(),
  submittedAt: z.string(),
  completedAt: z.string().nullable(),
  executor: z.string(),
  model: z.string().nullable(),
  /** The prompt's final result text; null until it ends (and when it ended without one). */
  response: z.string().nullable(),
  events: z.array(TaskEventRecordSchema).optional(),
  eventsStatus: EventsStatusSchema.optional(),
});
type ContentPrompt = z.infer<typeof ContentPromptSchema>;

/** GET /tasks/:id/content: the conversation, oldest prompt first (the hosted service's shape). */
export const TaskContentSchema = z.object({
  id: z.string(),
  status: TaskStatusValueSchema,
  prompts: z.array(ContentPromptSchema),
});

const ContentQuerySchema = z.strictObject({
  /** `events` adds each prompt's execution events; other values are ignored. */
  include: z
    .string()
    .max(200)
    .optional()
    .describe("`events` adds each prompt's execution events (comma-separated; others are ignored)")
    .transform((value) => (value ?? '').split(',').includes('events')),
});

/** A prompt of the task record in the hosted service's words; its executor and model are the prompt's own, if it chose. */
function contentPrompt(task: Task, record: PromptRecord, index: number): ContentPrompt {
  const spec = task.spec.prompts[index];
  return {
    id: record.id,
    status: record.status,
    userPrompt: record.prompt,
    submittedAt: record.submittedAt,
    completedAt: record.completedAt,
    executor: spec?.executor ?? task.spec.executor,
    model: spec?.model ?? task.spec.model ?? null,
    response: isTerminal(record.status) ? record.finalResult : null,
  };
}

interface PromptEvents {
  events: TaskEvent[];
  eventsStatus: EventsStatus;
}

const bounded = (events: TaskEvent[]): PromptEvents =>
  events.length > CONTENT_EVENTS_PER_PROMPT
    ? { events: events.slice(0, CONTENT_EVENTS_PER_PROMPT), eventsStatus: 'truncated' }
    : { events, eventsStatus: 'complete' };

const UNAVAILABLE: PromptEvents = { events: [], eventsStatus: 'unavailable' };

/**
 * One prompt's events: from the archive once the operator wrote it (also while the workspace
 * sleeps), else from the runner within CONTENT_RUNNER_TIMEOUT_MS; a prompt never dispatched has none.
 */
async function eventsOf(
  deps: TaskRoutesDeps,
  logger: Logger,
  task: Task,
  promptId: string,
): Promise<PromptEvents> {
  const store = deps.objectStore;
  const target = { namespace: task.metadata.namespace ?? '', task: task.metadata.name, promptId, after: -1 };
  if (store !== undefined && isArchived(task, promptId)) {
    try {
      return bounded(await readArchivedEvents(store, logger, target));
    } catch (err) {
      logger.warn({ err, task: task.metadata.name }, 'reading archived events failed; asking the runner');
    }
  }
  if (promptEntryOf(task, promptId)?.dispatchedAt === undefined)
    return { events: [], eventsStatus: 'complete' };
  const runner = runnerOf(deps.readModel, deps.installationKey, task, CONTENT_RUNNER_TIMEOUT_MS);
  if (runner === undefined) return UNAVAILABLE;
  try {
    return bounded((await runner.listEvents(task.metadata.name, { promptId })).events);
  } catch (err) {
    if (err instanceof RunnerRequestError && err.status === 404)
      return { events: [], eventsStatus: 'complete' };
    logger.warn({ err, task: task.metadata.name }, 'reading events from the runner failed');
    return UNAVAILABLE;
  }
}

/** GET /tasks/:id/content: same visibility and 404 rules as GET /tasks/:id. */
export const taskContentRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/tasks/:id/content',
    operationId: 'getTaskContent',
    summary: `The conversation, oldest prompt first: each prompt's text and response; with include=events its events too (at most ${CONTENT_EVENTS_PER_PROMPT} per prompt, eventsStatus says whether all)`,
    tag: 'Tasks',
    scope: 'tasks:read',
    params: TaskIdParamsSchema,
    query: ContentQuerySchema,
    responses: { 200: { description: 'The conversation', schema: TaskContentSchema } },
    handler: async ({ params, query, principal, req }) => {
      const task = await findTask(deps.readModel, principal, params.id);
      const record = presentTask(task, taskPresentation(deps));
      const prompts = record.prompts.map((prompt, index) => contentPrompt(task, prompt, index));
      const withEvents = query.include
        ? await Promise.all(
            prompts.map(async (prompt) => ({
              ...prompt,
              ...(await eventsOf(deps, req.log, task, prompt.id)),
            })),
          )
        : prompts;
      return { status: 200, body: { id: record.id, status: record.status, prompts: withEvents } };
    },
  });
