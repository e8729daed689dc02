// A client of the hosted service, unchanged, against the embedded default (API server, operator and
// real runner processes running `shell` prompts). Requests and response parsing are written from the
// hosted service's shapes, not from Agentry's presenters.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  OrganizationSpecSchema,
  OrganizationType,
  TaskSpecSchema,
  TaskType,
  apiVersionOf,
} from '../../../crds/index.js';
import { call } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { startEmbeddedStack } from '../../support/embedded-stack.js';
import type { EmbeddedStack } from '../../support/embedded-stack.js';
import { readTaskStream } from '../../support/sse.js';
import { until } from '../../support/until.js';
import { ContentShape } from './hosted-client-shapes.js';

const NAMESPACE = 'agentry-org-hosted';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;
let otherOrg: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-hosted-client-' });
  api = stack.api;
  // Room for every task and workspace this file makes (the operator owns the status, so made up front).
  await api.store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: OrganizationType.kind,
    metadata: { name: 'hosted' },
    spec: OrganizationSpecSchema.parse({
      displayName: 'hosted',
      plan: 'pro',
      limits: { webhooks: 3, concurrentTasks: 100, agentComputers: 100 },
    }),
  });
  key = await api.key({ org: 'hosted' });
  otherOrg = await api.key({ org: 'elsewhere' });
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

const TaskShape = z.object({
  id: z.string(),
  status: z.string(),
  workspaceId: z.string(),
  workspaceStatus: z.string().nullable(),
  prompts: z.array(z.object({ id: z.string(), status: z.string(), lastSeq: z.number().nullable() })),
});
const AgentComputerShape = z.object({
  id: z.string(),
  status: z.string(),
  provisionError: z.string().nullable(),
  requestedMode: z.string(),
});
const ListShape = z.object({ data: z.array(z.object({ id: z.string() })) });

async function json<T>(res: Response, shape: z.ZodType<T>, status = 200): Promise<T> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  return shape.parse(JSON.parse(text));
}

const createTask = async (body: Record<string, unknown>) =>
  json(
    await call(api, '/v1/tasks', { key, method: 'POST', body: { executor: 'shell', ...body } }),
    z.object({ id: z.string(), workspaceId: z.string() }),
    201,
  );
const getTask = async (id: string, as = key) =>
  json(await call(api, `/v1/tasks/${id}`, { key: as }), TaskShape);
const stream = (id: string, query = '', lastEventId?: number) =>
  readTaskStream(`${api.url}/v1/tasks/${id}/events${query}`, {
    key,
    timeoutMs: 90_000,
    ...(lastEventId === undefined ? {} : { lastEventId }),
  });

async function followUp(id: string, prompt: string): Promise<string> {
  const res = await call(api, `/v1/tasks/${id}/prompts`, { key, method: 'POST', body: { prompt } });
  return (await json(res, z.object({ promptId: z.string() }), 201)).promptId;
}

/** A conversation of two finished turns, as a chat client makes one. */
async function twoTurns(): Promise<{ id: string; workspaceId: string; first: string; second: string }> {
  const task = await createTask({ prompt: 'echo first-answer' });
  expect((await stream(task.id)).done?.status).toBe('completed');
  const second = await followUp(task.id, 'echo second-answer');
  expect((await stream(task.id)).done?.finalResult).toBe('second-answer');
  const first = (await getTask(task.id)).prompts[0]?.id ?? '';
  return { ...task, first, second };
}

describe('GET /v1/tasks/:id/content', () => {
  let turns: Awaited<ReturnType<typeof twoTurns>>;
  beforeAll(async () => {
    turns = await twoTurns();
  }, 120_000);

  it('answers the conversation oldest prompt first, with each response', async () => {
    const content = await json(await call(api, `/v1/tasks/${turns.id}/content`, { key }), ContentShape);
    expect(content).toMatchObject({ id: turns.id, status: 'completed' });
    expect(content.prompts.map((p) => [p.id, p.userPrompt, p.status, p.response, p.executor])).toEqual([
      [turns.first, 'echo first-answer', 'succeeded', 'first-answer', 'shell'],
      [turns.second, 'echo second-answer', 'succeeded', 'second-answer', 'shell'],
    ]);
    expect(content.prompts.every((p) => p.events === undefined && p.completedAt !== null)).toBe(true);
  });

  it('adds each prompt its own events with include=events', async () => {
    const res = await call(api, `/v1/tasks/${turns.id}/content?include=events`, { key });
    const content = await json(res, ContentShape);
    for (const prompt of content.prompts) {
      expect(prompt.events?.length).toBeGreaterThan(0);
      expect(prompt.events?.every((event) => event.promptId === prompt.id)).toBe(true);
    }
    const texts = content.prompts.map((p) =>
      p.events?.filter((e) => e.eventType === 'text').map((e) => e.payload.content),
    );
    expect(texts).toEqual([['first-answer'], ['second-answer']]);
  });

  it('answers the events while the workspace sleeps, from the archive', async () => {
    const res = await call(api, `/v1/agent-computers/${turns.workspaceId}/stop`, { key, method: 'POST' });
    expect(res.status).toBe(202);
    await until('the workspace to sleep', async () => {
      const ac = await json(
        await call(api, `/v1/agent-computers/${turns.workspaceId}`, { key }),
        AgentComputerShape,
      );
      return ac.status === 'hibernated' ? ac : undefined;
    });
    const content = await json(
      await call(api, `/v1/tasks/${turns.id}/content?include=events`, { key }),
      ContentShape,
    );
    expect(content.prompts.map((p) => p.events?.some((e) => e.eventType === 'result'))).toEqual([true, true]);
  });

  it("is 404 for another organization's task, like GET /tasks/:id", async () => {
    const res = await call(api, `/v1/tasks/${turns.id}/content`, { key: otherOrg });
    expect(res.status).toBe(404);
    expect((await call(api, `/v1/tasks/${randomUUID()}/content`, { key })).status).toBe(404);
  });
});

describe('GET /v1/tasks/:id/events after a follow-up', () => {
  let turns: Awaited<ReturnType<typeof twoTurns>>;
  beforeAll(async () => {
    turns = await twoTurns();
  }, 120_000);

  it('streams the latest prompt only, then done with that prompt last event', async () => {
    const latest = await stream(turns.id);
    expect(latest.events.length).toBeGreaterThan(0);
    expect(latest.events.every((event) => event.promptId === turns.second)).toBe(true);
    expect(latest.done?.lastSeq).toBe(latest.events.at(-1)?.seq);
  });

  it("records each prompt's own last event as lastSeq in the task record", async () => {
    const whole = await stream(turns.id, '?all=true');
    const lastOf = (promptId: string) =>
      whole.events.filter((event) => event.promptId === promptId).at(-1)?.seq;
    const record = await getTask(turns.id);
    expect(record.prompts.map((prompt) => prompt.lastSeq)).toEqual([
      lastOf(turns.first),
      lastOf(turns.second),
    ]);
  });

  it('replays the whole task with all=true and with after=-1', async () => {
    for (const query of ['?all=true', '?after=-1']) {
      const whole = await stream(turns.id, query);
      expect(whole.events.map((event) => event.seq)).toEqual(whole.events.map((_e, i) => i));
      expect(new Set(whole.events.map((event) => event.promptId))).toEqual(
        new Set([turns.first, turns.second]),
      );
    }
  });

  it('resumes task-wide with Last-Event-ID', async () => {
    const whole = await stream(turns.id, '?all=true');
    const resumed = await stream(turns.id, '', 0);
    expect(resumed.events.map((event) => event.seq)).toEqual(whole.events.slice(1).map((event) => event.seq));
  });
});

describe('status a client can trust', () => {
  it('stop and start answer 202 with the status now and the requested mode', async () => {
    const made = await json(
      await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'truthful' } }),
      AgentComputerShape,
      201,
    );
    await until('ready', async () => {
      const ac = await json(await call(api, `/v1/agent-computers/${made.id}`, { key }), AgentComputerShape);
      return ac.status === 'ready' ? ac : undefined;
    });
    const stopping = await json(
      await call(api, `/v1/agent-computers/${made.id}/stop`, { key, method: 'POST' }),
      AgentComputerShape,
      202,
    );
    // Regression: a stop answered "provisioning".
    expect(stopping.requestedMode).toBe('hibernated');
    expect(['ready', 'hibernated']).toContain(stopping.status);
    await until('hibernated', async () => {
      const ac = await json(await call(api, `/v1/agent-computers/${made.id}`, { key }), AgentComputerShape);
      return ac.status === 'hibernated' ? ac : undefined;
    });
    const starting = await json(
      await call(api, `/v1/agent-computers/${made.id}/start`, { key, method: 'POST' }),
      AgentComputerShape,
      202,
    );
    expect(starting.requestedMode).toBe('running');
    expect(starting.status).not.toBe('error');
    await until('ready again', async () => {
      const ac = await json(await call(api, `/v1/agent-computers/${made.id}`, { key }), AgentComputerShape);
      return ac.status === 'ready' ? ac : undefined;
    });
  });

  it('a task waiting for its workspace says so: prompt pending, workspaceStatus not ready', async () => {
    const task = await createTask({ prompt: 'echo hi' });
    const record = await getTask(task.id);
    if (record.workspaceStatus !== 'ready') expect(record.prompts[0]?.status).toBe('pending');
    expect(['provisioning', 'ready']).toContain(record.workspaceStatus);
    expect((await stream(task.id)).done?.status).toBe('completed');
    expect((await getTask(task.id)).workspaceStatus).toBe('ready');
  });

  it('an agent computer on a runtime the operator does not run is error, naming it and what to enable', async () => {
    await api.store.create(AgentComputerType, {
      apiVersion: apiVersionOf(AgentComputerType),
      kind: AgentComputerType.kind,
      metadata: { name: 'vm-box', namespace: NAMESPACE },
      spec: AgentComputerSpecSchema.parse({ displayName: 'VM box', runtime: 'kubevirt' }),
    });
    const ac = await until('the error', async () => {
      const got = await json(await call(api, '/v1/agent-computers/vm-box', { key }), AgentComputerShape);
      return got.status === 'error' ? got : undefined;
    });
    expect(ac.provisionError).toMatch(/kubevirt.*not enabled.*AGENTRY_RUNTIMES/);
    const task = await createTask({ prompt: 'echo never', workspaceId: 'vm-box' });
    const waiting = await getTask(task.id);
    expect(waiting).toMatchObject({ workspaceStatus: 'error', prompts: [{ status: 'pending' }] });
  });
});

describe('resources named with kubectl (GitOps), not UUIDs', () => {
  it('lists and reads an agent computer by its name, runs a task on it, and hides it from other orgs', async () => {
    await api.store.create(AgentComputerType, {
      apiVersion: apiVersionOf(AgentComputerType),
      kind: AgentComputerType.kind,
      metadata: { name: 'my-box', namespace: NAMESPACE },
      spec: AgentComputerSpecSchema.parse({ displayName: 'My box' }),
    });
    const list = await json(await call(api, '/v1/agent-computers?limit=100', { key }), ListShape);
    expect(list.data.map((item) => item.id)).toContain('my-box');
    expect((await call(api, '/v1/agent-computers/my-box', { key })).status).toBe(200);
    expect((await call(api, '/v1/agent-computers/my-box', { key: otherOrg })).status).toBe(404);
    const task = await createTask({ prompt: 'echo on-my-box', workspaceId: 'my-box' });
    expect((await stream(task.id)).done?.finalResult).toBe('on-my-box');
  });

  it('lists and reads a task by its name', async () => {
    await api.store.create(TaskType, {
      apiVersion: apiVersionOf(TaskType),
      kind: TaskType.kind,
      metadata: { name: 'my-task', namespace: NAMESPACE },
      spec: TaskSpecSchema.parse({
        workspace: 'my-box',
        executor: 'shell',
        title: 'GitOps task',
        owner: 'gitops',
        prompts: [{ id: randomUUID(), text: 'echo from-gitops', submittedAt: new Date().toISOString() }],
      }),
    });
    await until('the API to see it', async () =>
      (await call(api, '/v1/tasks/my-task', { key })).status === 200 ? true : undefined,
    );
    const list = await json(await call(api, '/v1/tasks?limit=100', { key }), ListShape);
    expect(list.data.map((item) => item.id)).toContain('my-task');
    expect((await call(api, '/v1/tasks/my-task', { key: otherOrg })).status).toBe(404);
    expect((await stream('my-task')).done?.finalResult).toBe('from-gitops');
  });
});
