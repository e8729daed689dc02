import { randomUUID } from 'node:crypto';
import { TaskType, clientTaskStatus } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { Principal } from '../auth/principal.js';
import { updateWithRetry } from '../optimistic-update.js';
import { indexedPage, listEnvelopeJson } from '../pagination.js';
import {
  TaskPageSchema,
  ApiTaskRecordSchema,
  apiTaskAnswer,
  apiTaskListItemJson,
  presentApiTask,
  presentTask,
  taskCreatedAt,
} from './present.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition, RouteResult } from '../route.js';
import { assertVisible, findTask, findTaskSoon, taskNotFound, taskPresentation } from './access.js';
import type { TaskRoutesDeps } from './access.js';
import { createTask, promptSpecOf } from './create.js';
import { taskContentRoute } from './content.js';
import { promptEventsRoute, taskEventsRoute } from './event-routes.js';
import { checkExecutor } from './executor-policy.js';
import { assertTaskSlot } from './limits.js';
import { taskListBuckets } from './list-index.js';
import { TaskRecordCache } from './record-cache.js';
import { softDeleted, withCancelRequested, withPrompt, withVisibility } from './mutations.js';
import {
  AddPromptBodySchema,
  CreateTaskBodySchema,
  CreatedPromptSchema,
  CreatedTaskSchema,
  ListTasksQuerySchema,
  TaskIdParamsSchema,
  VisibilityBodySchema,
  VisibilityResultSchema,
} from './schemas.js';

export type { TaskRoutesDeps } from './access.js';

const TAG = 'Tasks';

/**
 * Read-modify-write of one task the caller may see, with optimistic concurrency: a status write of
 * the operator meanwhile means a fresh read and another try, so neither side loses its change.
 */
async function updateTask(
  deps: TaskRoutesDeps,
  principal: Principal,
  id: string,
  mutate: (current: Task) => Task | undefined,
): Promise<Task> {
  const task = await findTask(deps.readModel, principal, id);
  const updated = await updateWithRetry(
    deps.store,
    TaskType,
    principal.namespace,
    task.metadata.name,
    (current) => {
      assertVisible(current, principal); // a delete may have won since the cache was read
      return mutate(current);
    },
  );
  if (updated === undefined) throw taskNotFound();
  deps.readModel.observeTask(updated);
  return updated;
}

const createTaskRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: '/v1/tasks',
    operationId: 'createTask',
    summary: 'Create a task: its first prompt runs in a new or an existing workspace',
    tag: TAG,
    scope: 'tasks:write',
    body: CreateTaskBodySchema,
    responses: {
      201: { description: 'Created; it does not wait for the workspace', schema: CreatedTaskSchema },
    },
    handler: async ({ body, principal, req }) => {
      const task = await createTask(deps, principal, body, req.log);
      const record = {
        id: task.metadata.name,
        workspaceId: task.spec.workspace,
        url: `${deps.publicUrl}/v1/tasks/${task.metadata.name}`,
        status: 'running' as const,
        createdAt: taskCreatedAt(task),
      };
      return { status: 201, body: record, headers: { Location: record.url } };
    },
  });

const listTasksRoute = (deps: TaskRoutesDeps, records: TaskRecordCache): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/tasks',
    operationId: 'listTasks',
    direct: true,
    summary: 'List tasks, newest first (without prompt texts)',
    tag: TAG,
    scope: 'tasks:read',
    query: ListTasksQuerySchema,
    responses: { 200: { description: 'A page of tasks', schema: TaskPageSchema } },
    handler: ({ query, principal }) => {
      const buckets = taskListBuckets(principal, query);
      return {
        status: 200,
        body: listEnvelopeJson(
          indexedPage(deps.readModel.tasks, principal.namespace, buckets, query, (task) =>
            apiTaskListItemJson(task, records, deps.readModel),
          ),
        ),
      };
    },
  });

const getTaskRoute = (deps: TaskRoutesDeps, records: TaskRecordCache): RouteDefinition =>
  defineRoute({
    method: 'get',
    path: '/v1/tasks/:id',
    operationId: 'getTask',
    direct: true,
    summary: 'Get one task with its prompts',
    tag: TAG,
    scope: 'tasks:read',
    params: TaskIdParamsSchema,
    responses: { 200: { description: 'The task', schema: ApiTaskRecordSchema } },
    handler: ({ params, principal }) => {
      const answer = (task: Task): RouteResult => ({
        status: 200,
        body: apiTaskAnswer(task, records, deps.readModel),
      });
      const task = findTaskSoon(deps.readModel, principal, params.id);
      return task instanceof Promise ? task.then(answer) : answer(task);
    },
  });

const addPromptRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: '/v1/tasks/:id/prompts',
    operationId: 'addPrompt',
    summary: 'Send a follow-up prompt; it waits while another runs and resumes a sleeping workspace',
    tag: TAG,
    scope: 'tasks:write',
    params: TaskIdParamsSchema,
    body: AddPromptBodySchema,
    responses: { 201: { description: 'Queued', schema: CreatedPromptSchema } },
    handler: async ({ params, body, principal }) => {
      const task = await findTask(deps.readModel, principal, params.id);
      checkExecutor(deps.executors, principal.organization, body.executor ?? task.spec.executor, body.model);
      // A finished task that gets a prompt runs again, so it needs a slot like a new one.
      if (clientTaskStatus(task) !== 'running') assertTaskSlot(deps.readModel, principal, task.metadata.name);
      const prompt = promptSpecOf(body, deps.now());
      await updateTask(deps, principal, params.id, (current) => withPrompt(current, prompt));
      return { status: 201, body: { promptId: prompt.id } };
    },
  });

const cancelTaskRoute = (deps: TaskRoutesDeps, records: TaskRecordCache): RouteDefinition =>
  defineRoute({
    method: 'post',
    path: '/v1/tasks/:id/cancel',
    operationId: 'cancelTask',
    summary: 'Cancel the running and pending prompts (a finished task is left as it is)',
    tag: TAG,
    scope: 'tasks:write',
    params: TaskIdParamsSchema,
    responses: { 200: { description: 'The task', schema: ApiTaskRecordSchema } },
    handler: async ({ params, principal }) => {
      const at = deps.now();
      const updated = await updateTask(deps, principal, params.id, (current) =>
        withCancelRequested(current, at),
      );
      return { status: 200, body: presentApiTask(updated, records, deps.readModel) };
    },
  });

const visibilityRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'patch',
    path: '/v1/tasks/:id/visibility',
    operationId: 'setTaskVisibility',
    summary: 'Make a task private, shared with the organization, or public with a share link',
    tag: TAG,
    scope: 'tasks:write',
    params: TaskIdParamsSchema,
    body: VisibilityBodySchema,
    responses: { 200: { description: 'The visibility and the share link', schema: VisibilityResultSchema } },
    handler: async ({ params, body, principal }) => {
      const updated = await updateTask(deps, principal, params.id, (current) =>
        withVisibility(current, body.visibility, randomUUID),
      );
      const { visibility, shareUrl } = presentTask(updated, taskPresentation(deps));
      return { status: 200, body: { visibility, shareUrl } };
    },
  });

const deleteTaskRoute = (deps: TaskRoutesDeps): RouteDefinition =>
  defineRoute({
    method: 'delete',
    path: '/v1/tasks/:id',
    operationId: 'deleteTask',
    summary: 'Delete a task: its prompts are canceled, its workspace and artifacts stay',
    tag: TAG,
    scope: 'tasks:write',
    params: TaskIdParamsSchema,
    responses: { 204: { description: 'Deleted (purged after a retention period)' } },
    handler: async ({ params, principal }) => {
      const at = deps.now();
      await updateTask(deps, principal, params.id, (current) => softDeleted(current, at));
      return { status: 204 };
    },
  });

/** The task routes of docs/api.md#tasks. The API writes intent only; the operator does the rest. */
export function taskRoutes(deps: TaskRoutesDeps): RouteDefinition[] {
  const records = new TaskRecordCache(taskPresentation(deps));
  return [
    createTaskRoute(deps),
    listTasksRoute(deps, records),
    getTaskRoute(deps, records),
    taskContentRoute(deps),
    addPromptRoute(deps),
    cancelTaskRoute(deps, records),
    visibilityRoute(deps),
    deleteTaskRoute(deps),
    taskEventsRoute(deps),
    promptEventsRoute(deps),
  ];
}
