// Workspaces made for a task do not pile up (embedded default, real runner processes): one hibernates
// once its task has nothing to run, stops counting against limits.agentComputers, and wakes for a
// follow-up prompt.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { updateWithRetry } from '../../api/optimistic-update.js';
import { AgentComputerType, HIBERNATED_BY_ANNOTATION, OrganizationType } from '../../crds/index.js';
import { call, eventually } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const StatusSchema = z.object({ status: z.string() });

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-ephemeral-', ephemeralIdleGraceMs: 500 });
  api = stack.api;
  key = await api.key({ org: 'acme' });
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const workspaceStatus = async (id: string): Promise<string> =>
  StatusSchema.parse(await (await call(api, `/v1/agent-computers/${id}`, { key })).json()).status;

it('hibernates a task-made workspace when the task is idle, stops counting it, and resumes it for a follow-up', async () => {
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: 'echo one' },
  });
  expect(res.status).toBe(201);
  const task = CreatedSchema.parse(await res.json());
  const first = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, { key, timeoutMs: 90_000 });
  expect(first.done?.status).toBe('completed');

  await until(
    'the workspace to hibernate',
    async () => (await workspaceStatus(task.workspaceId)) === 'hibernated',
  );
  const stored = await api.store.get(AgentComputerType, NAMESPACE, task.workspaceId);
  expect(stored?.metadata.annotations?.[HIBERNATED_BY_ANNOTATION]).toBe('task-idle');

  // With a limit of one, the hibernated task workspace leaves room for a workspace of one's own.
  await updateWithRetry(api.store, OrganizationType, undefined, 'acme', (org) => ({
    ...org,
    spec: { ...org.spec, limits: { ...org.spec.limits, agentComputers: 1 } },
  }));
  await eventually(
    () => api.readModel.organizations.get(undefined, 'acme')?.spec.limits.agentComputers === 1,
  );
  const own = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'mine' } });
  expect(own.status).toBe(201);

  const followUp = await call(api, `/v1/tasks/${task.id}/prompts`, {
    key,
    method: 'POST',
    body: { prompt: 'echo two' },
  });
  expect(followUp.status).toBe(201);
  const second = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, { key, timeoutMs: 90_000 });
  expect(second.done?.status).toBe('completed');
  expect(second.events.some((event) => event.eventType === 'text' && event.payload.content === 'two')).toBe(
    true,
  );
}, 180_000);
