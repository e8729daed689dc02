import { expect } from '@jest/globals';
import { z } from 'zod';
import { TaskListItemSchema, TaskRecordSchema } from '../../../api/task/present.js';
import type { TaskRecord } from '../../../api/task/present.js';
import { CreatedTaskSchema } from '../../../api/task/schemas.js';
import { AgentComputerType, OrganizationType, TaskType } from '../../../crds/index.js';
import type { OrganizationSpec, PromptStatusEntry, Task, TaskStatus } from '../../../crds/index.js';
import type { ResourceStore } from '../../../platform/store/types.js';
import { AgentComputerRecordSchema } from '../../../api/agent-computer/present.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

/** Helpers shared by the task API tests (not a test file itself). */

export const namespaceOf = (org: string): string => `agentry-org-${org}`;

export const TaskListSchema = z.object({
  data: z.array(TaskListItemSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

export async function errorOf(res: Response): Promise<z.infer<typeof ErrorBodySchema>['error']> {
  return ErrorBodySchema.parse(await res.json()).error;
}

export type CreatedTask = z.infer<typeof CreatedTaskSchema>;

export async function createTask(api: TestApi, key: string, body: unknown): Promise<CreatedTask> {
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body });
  if (res.status !== 201) throw new Error(`POST /v1/tasks answered ${res.status}: ${await res.text()}`);
  return CreatedTaskSchema.parse(await res.json());
}

export async function getTask(api: TestApi, key: string, id: string): Promise<TaskRecord> {
  const res = await call(api, `/v1/tasks/${id}`, { key });
  expect(res.status).toBe(200);
  return TaskRecordSchema.parse(await res.json());
}

export async function storedTask(api: TestApi, org: string, id: string): Promise<Task> {
  const task = await api.store.get(TaskType, namespaceOf(org), id);
  if (task === undefined) throw new Error(`task ${id} is not stored`);
  return task;
}

/**
 * Plays the operator's part: writes prompt entries into Task status (what the reconciler records
 * from the runner), then waits until the API's cache has seen the write.
 */
export async function recordPrompts(
  api: TestApi,
  org: string,
  id: string,
  entries: (task: Task) => PromptStatusEntry[],
  extra: Omit<TaskStatus, 'prompts'> = {},
): Promise<Task> {
  const task = await storedTask(api, org, id);
  const written = await api.store.replaceStatus(TaskType, {
    ...task,
    status: { ...task.status, prompts: entries(task), ...extra },
  });
  await eventually(
    () =>
      api.readModel.tasks.get(namespaceOf(org), id)?.metadata.resourceVersion ===
      written.metadata.resourceVersion,
  );
  return written;
}

/** Changes an organization's spec (limits, executor policy) and waits until the API sees it. */
export async function configureOrganization(
  api: TestApi,
  name: string,
  change: (spec: OrganizationSpec) => OrganizationSpec,
): Promise<void> {
  await api.organization(name);
  const current = await api.store.get(OrganizationType, undefined, name);
  if (current === undefined) throw new Error(`organization ${name} is missing`);
  const written = await api.store.replace(OrganizationType, { ...current, spec: change(current.spec) });
  await eventually(
    () =>
      api.readModel.organizations.get(undefined, name)?.metadata.resourceVersion ===
      written.metadata.resourceVersion,
  );
}

/**
 * A store that behaves like `inner` except where a hook steps in: to make one call fail, or to let
 * "the operator" write between the API's read and its write.
 */
export function interceptingStore(
  inner: ResourceStore,
  hooks: {
    beforeCreate?: (kind: string) => Promise<void>;
    afterGet?: (kind: string, name: string) => Promise<void>;
    onReplaceError?: (err: unknown) => void;
  },
): ResourceStore {
  return {
    get: async (type, namespace, name) => {
      const found = await inner.get(type, namespace, name);
      await hooks.afterGet?.(type.kind, name);
      return found;
    },
    list: (type, options) => inner.list(type, options),
    watch: (type, options, onEvent) => inner.watch(type, options, onEvent),
    create: async (type, object) => {
      await hooks.beforeCreate?.(type.kind);
      return inner.create(type, object);
    },
    replace: async (type, object) => {
      try {
        return await inner.replace(type, object);
      } catch (err) {
        hooks.onReplaceError?.(err);
        throw err;
      }
    },
    replaceStatus: (type, object, options) => inner.replaceStatus(type, object, options),
    delete: (type, namespace, name, options) => inner.delete(type, namespace, name, options),
    close: () => inner.close(),
  };
}

export const ISO_MILLIS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** One API for a test file: keys of two acme users and one of globex, acme's limits raised. */
export async function startTasksApi(): Promise<{ api: TestApi; alice: string; bob: string; globex: string }> {
  const api = await startTestApi();
  const alice = await api.key({ org: 'acme', user: 'alice' });
  const bob = await api.key({ org: 'acme', user: 'bob' });
  const globex = await api.key({ org: 'globex', user: 'gina' });
  // Many tests make tasks (and so workspaces) in acme; the limits have their own tests.
  await configureOrganization(api, 'acme', (spec) => ({
    ...spec,
    limits: { ...spec.limits, agentComputers: 1000, concurrentTasks: 1000 },
  }));
  return { api, alice, bob, globex };
}

export const workspacesOf = async (api: TestApi, org: string) =>
  (await api.store.list(AgentComputerType, { namespace: namespaceOf(org) })).items;

export async function createWorkspace(api: TestApi, key: string): Promise<string> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'box' } });
  expect(res.status).toBe(201);
  return AgentComputerRecordSchema.parse(await res.json()).id;
}
