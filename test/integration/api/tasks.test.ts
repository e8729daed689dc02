import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { AgentComputerRecordSchema } from '../../../api/agent-computer/present.js';
import { AgentComputerType, TaskType } from '../../../crds/index.js';
import { ExecutorCatalog } from '../../../platform/executor-catalog.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  ISO_MILLIS,
  TaskListSchema,
  configureOrganization,
  createTask,
  errorOf,
  getTask,
  interceptingStore,
  namespaceOf,
  recordPrompts,
  storedTask,
} from './tasks-support.js';

let api: TestApi;
let alice: string;
let bob: string;
let globex: string;

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.key({ org: 'acme', user: 'alice' });
  bob = await api.key({ org: 'acme', user: 'bob' });
  globex = await api.key({ org: 'globex', user: 'gina' });
  // Many tests make tasks (and so workspaces) in acme; the limits have their own tests.
  await configureOrganization(api, 'acme', (spec) => ({
    ...spec,
    limits: { ...spec.limits, agentComputers: 1000, concurrentTasks: 1000 },
  }));
});
afterAll(async () => {
  await api.stop();
});

const workspacesOf = async (org: string) =>
  (await api.store.list(AgentComputerType, { namespace: namespaceOf(org) })).items;

async function createWorkspace(key: string): Promise<string> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'box' } });
  expect(res.status).toBe(201);
  return AgentComputerRecordSchema.parse(await res.json()).id;
}

describe('POST /v1/tasks', () => {
  it('answers 201 with the contract shape and Location, and makes an ephemeral workspace and the Task', async () => {
    const before = (await workspacesOf('acme')).length;
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'Fix the flaky test\nIt fails on Tuesdays.', skills: ['testing'] },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'id', 'status', 'url', 'workspaceId']);
    expect(body).toMatchObject({ status: 'running', url: `http://agentry.test/v1/tasks/${String(body.id)}` });
    expect(body.createdAt).toMatch(ISO_MILLIS);
    expect(res.headers.get('location')).toBe(body.url);

    const workspaces = await workspacesOf('acme');
    expect(workspaces).toHaveLength(before + 1);
    const workspace = await api.store.get(AgentComputerType, namespaceOf('acme'), String(body.workspaceId));
    expect(workspace?.spec).toMatchObject({
      ephemeral: true,
      owner: 'alice',
      displayName: 'Fix the flaky test',
      operatingMode: 'Running',
    });

    const task = await storedTask(api, 'acme', String(body.id));
    expect(task.metadata.labels).toEqual({ 'agentry.dev/workspace': body.workspaceId });
    expect(task.spec).toMatchObject({
      workspace: body.workspaceId,
      executor: 'claude',
      title: 'Fix the flaky test',
      owner: 'alice',
      visibility: 'shared',
    });
    expect(task.spec.shareId).toBeUndefined();
    expect(task.spec.prompts).toHaveLength(1);
    expect(task.spec.prompts[0]).toMatchObject({
      text: 'Fix the flaky test\nIt fails on Tuesdays.',
      skills: ['testing'],
    });
    expect(task.spec.prompts[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(task.spec.prompts[0]?.submittedAt ?? '').toISOString()).toBe(body.createdAt);
  });

  it("cuts the default title to the prompt's first line, 80 characters", async () => {
    const created = await createTask(api, alice, { prompt: `\n  ${'x'.repeat(100)}  \nsecond line` });
    expect((await storedTask(api, 'acme', created.id)).spec.title).toBe('x'.repeat(80));
    const titled = await createTask(api, alice, { prompt: 'p', title: 'My title' });
    expect((await getTask(api, alice, titled.id)).title).toBe('My title');
  });

  it('runs in the given workspace without making a new one', async () => {
    const workspaceId = await createWorkspace(alice);
    const before = (await workspacesOf('acme')).length;
    const created = await createTask(api, alice, { prompt: 'hello', workspaceId });
    expect(created.workspaceId).toBe(workspaceId);
    expect(await workspacesOf('acme')).toHaveLength(before);
    expect((await storedTask(api, 'acme', created.id)).spec.workspace).toBe(workspaceId);
  });

  it("answers 404 not_found for another organization's workspace, and creates nothing", async () => {
    const theirs = await createWorkspace(globex);
    const tasksBefore = (await api.store.list(TaskType, { namespace: namespaceOf('acme') })).items.length;
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'hi', workspaceId: theirs },
    });
    expect(res.status).toBe(404);
    expect(await errorOf(res)).toMatchObject({ code: 'not_found', message: 'Workspace not found' });
    expect((await api.store.list(TaskType, { namespace: namespaceOf('acme') })).items).toHaveLength(
      tasksBefore,
    );
  });

  it('answers 404 for a workspace that is being deleted', async () => {
    const workspaceId = await createWorkspace(alice);
    expect(
      (await call(api, `/v1/agent-computers/${workspaceId}`, { key: alice, method: 'DELETE' })).status,
    ).toBe(204);
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'x', workspaceId },
    });
    expect(res.status).toBe(404);
  });

  it('answers 403 agent_disabled for an executor the organization disabled', async () => {
    const key = await api.key({ org: 'strict' });
    await configureOrganization(api, 'strict', (spec) => ({
      ...spec,
      executors: { default: 'claude', disabled: ['codex', 'claude'] },
    }));
    const res = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: { prompt: 'x', executor: 'codex' },
    });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('agent_disabled');
    // The organization's default counts as a choice too.
    const byDefault = await call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'x' } });
    expect(byDefault.status).toBe(403);
    expect(await workspacesOf('strict')).toHaveLength(0);
  });

  it("uses the organization's default executor", async () => {
    const key = await api.key({ org: 'shelly' });
    await configureOrganization(api, 'shelly', (spec) => ({
      ...spec,
      executors: { default: 'shell', disabled: [] },
    }));
    const created = await createTask(api, key, { prompt: 'echo hi' });
    expect((await getTask(api, key, created.id)).executor).toBe('shell');
  });

  it('answers 400 validation_error naming executor for an executor the installation does not know', async () => {
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'x', executor: 'cobol' },
    });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('validation_error');
    expect(error.details?.[0]?.path).toBe('executor');
  });

  it("ignores the hosted clients' unknown body fields and names them in a Warning header", async () => {
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: {
        prompt: 'x',
        mcpServers: { github: { url: 'https://mcp.example' } },
        agent_instructions: 'be brief',
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe(
      '299 agentry "ignored unknown fields: mcpServers, agent_instructions"',
    );
    const { id } = z.object({ id: z.string() }).parse(await res.json());
    expect(Object.keys((await storedTask(api, 'acme', id)).spec)).not.toContain('mcpServers');
  });

  it('still answers 400 for a known field of the wrong type beside an unknown one', async () => {
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 42, priority: 1 },
    });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('validation_error');
    expect(error.details?.map((detail) => detail.path)).toEqual(['prompt']);
  });

  it('answers 400 for a prompt over 100,000 characters and for an empty one', async () => {
    const long = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'x'.repeat(100_001) },
    });
    expect(long.status).toBe(400);
    expect((await errorOf(long)).details?.[0]?.path).toBe('prompt');
    const empty = await call(api, '/v1/tasks', { key: alice, method: 'POST', body: { prompt: '' } });
    expect(empty.status).toBe(400);
    expect((await createTask(api, alice, { prompt: 'y'.repeat(100_000) })).status).toBe('running');
  });

  it('stores githubUrl as a clone URL with branch main by default, or the given branchName', async () => {
    const short = await createTask(api, alice, { prompt: 'x', githubUrl: 'octo-org/hello.world' });
    expect((await storedTask(api, 'acme', short.id)).spec).toMatchObject({
      githubUrl: 'https://github.com/octo-org/hello.world',
      branch: 'main',
    });
    const full = await createTask(api, alice, {
      prompt: 'x',
      githubUrl: 'https://gitlab.example.com/group/repo.git',
      branchName: 'feature/login',
    });
    expect((await storedTask(api, 'acme', full.id)).spec).toMatchObject({
      githubUrl: 'https://gitlab.example.com/group/repo.git',
      branch: 'feature/login',
    });
  });

  it('refuses a githubUrl that is neither owner/repo nor https, and a branch that looks like an option', async () => {
    for (const body of [
      { prompt: 'x', githubUrl: 'http://github.com/a/b' },
      { prompt: 'x', githubUrl: 'file:///etc' },
      { prompt: 'x', githubUrl: 'a/b', branchName: '--upload-pack=evil' },
      { prompt: 'x', files: [{ id: '3f0e0b52-9a43-4a55-9d0f-0a5b8f7c1e11', filename: '../escape' }] },
    ]) {
      const res = await call(api, '/v1/tasks', { key: alice, method: 'POST', body });
      expect(res.status).toBe(400);
    }
  });

  it('refuses a githubUrl carrying credentials, which would be stored in the Task resource', async () => {
    const res = await call(api, '/v1/tasks', {
      key: alice,
      method: 'POST',
      body: { prompt: 'x', githubUrl: 'https://x-access-token:ghp_secret@github.com/a/b.git' },
    });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.details?.[0]?.path).toBe('githubUrl');
    expect(JSON.stringify(error)).not.toContain('ghp_secret');
  });

  it('checks the model against the executor when the installation lists its models', async () => {
    const catalog = new ExecutorCatalog([
      {
        name: 'claude',
        format: 'claude-stream-json',
        command: 'claude',
        args: ['-p', '{prompt}'],
        promptVia: 'argument',
        env: {},
        models: ['opus', 'sonnet'],
        timeout: '1h',
      },
    ]);
    const other = await startTestApi({ executors: catalog });
    try {
      const key = await other.key({ org: 'acme' });
      const bad = await call(other, '/v1/tasks', {
        key,
        method: 'POST',
        body: { prompt: 'x', model: 'gpt-1' },
      });
      expect(bad.status).toBe(400);
      expect((await errorOf(bad)).details?.[0]?.path).toBe('model');
      const good = await createTask(other, key, { prompt: 'x', model: 'opus' });
      expect((await getTask(other, key, good.id)).model).toBe('opus');
    } finally {
      await other.stop();
    }
  });

  it('needs the tasks:write scope', async () => {
    const reader = await api.key({ org: 'acme', user: 'alice', scopes: ['tasks:read'] });
    const res = await call(api, '/v1/tasks', { key: reader, method: 'POST', body: { prompt: 'x' } });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('insufficient_scopes');
  });
});

describe('organization limits', () => {
  it('answers 400 limit_exceeded beyond concurrentTasks, and frees the slot once the operator records the end', async () => {
    const key = await api.key({ org: 'busy' });
    await configureOrganization(api, 'busy', (spec) => ({
      ...spec,
      limits: { ...spec.limits, concurrentTasks: 1 },
    }));
    const first = await createTask(api, key, { prompt: 'one' });
    const refused = await call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'two' } });
    expect(refused.status).toBe(400);
    expect((await errorOf(refused)).code).toBe('limit_exceeded');
    expect(await workspacesOf('busy')).toHaveLength(1);

    await recordPrompts(api, 'busy', first.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'succeeded' })),
    );
    await createTask(api, key, { prompt: 'three' });
  });

  it('counts the ephemeral workspace against agentComputers and points to workspaceId beyond it', async () => {
    const key = await api.key({ org: 'small' });
    await configureOrganization(api, 'small', (spec) => ({
      ...spec,
      limits: { ...spec.limits, agentComputers: 1 },
    }));
    const first = await createTask(api, key, { prompt: 'one' });
    const refused = await call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'two' } });
    expect(refused.status).toBe(400);
    const error = await errorOf(refused);
    expect(error.code).toBe('limit_exceeded');
    expect(error.message).toContain('workspaceId');
    // Reusing the workspace needs no new one.
    await createTask(api, key, { prompt: 'three', workspaceId: first.workspaceId });
    expect(await workspacesOf('small')).toHaveLength(1);
  });
});

describe('all or nothing', () => {
  it('deletes the ephemeral workspace when the Task cannot be created, and answers 500 without the cause', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-tasks-'));
    const inner = await EmbeddedStore.open(join(dir, 'store'));
    const store = interceptingStore(inner, {
      beforeCreate: (kind) =>
        kind === 'Task' ? Promise.reject(new Error('etcd is on fire')) : Promise.resolve(),
    });
    const failing = await startTestApi({ store });
    try {
      const key = await failing.key({ org: 'acme' });
      const res = await call(failing, '/v1/tasks', { key, method: 'POST', body: { prompt: 'x' } });
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain('etcd');
      expect((await inner.list(AgentComputerType, { namespace: namespaceOf('acme') })).items).toHaveLength(0);
    } finally {
      await failing.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('GET /v1/tasks/:id', () => {
  it('answers the task record: nulls for what is not known yet, timestamps in milliseconds', async () => {
    const created = await createTask(api, alice, { prompt: 'describe me' });
    const record = await getTask(api, alice, created.id);
    expect(record).toMatchObject({
      id: created.id,
      url: created.url,
      status: 'running',
      title: 'describe me',
      executor: 'claude',
      model: null,
      workspaceId: created.workspaceId,
      visibility: 'shared',
      shareUrl: null,
      createdAt: created.createdAt,
      completedAt: null,
      finalResult: null,
    });
    expect(record.updatedAt).toMatch(ISO_MILLIS);
    expect(record.prompts).toEqual([
      {
        id: expect.any(String),
        status: 'pending',
        prompt: 'describe me',
        submittedAt: created.createdAt,
        startedAt: null,
        completedAt: null,
        finalResult: null,
        error: null,
        lastSeq: null,
      },
    ]);
  });

  it('shows what the operator records: prompt times, final result, completed status', async () => {
    const created = await createTask(api, alice, { prompt: 'work' });
    await recordPrompts(
      api,
      'acme',
      created.id,
      (task) =>
        task.spec.prompts.map((p) => ({
          id: p.id,
          status: 'succeeded',
          startedAt: '2030-01-01T00:00:01Z',
          completedAt: '2030-01-01T00:00:09.5Z',
          lastSeq: 4,
          finalResult: 'All done',
        })),
      { completedAt: '2030-01-01T00:00:09.5Z' },
    );
    const record = await getTask(api, alice, created.id);
    expect(record).toMatchObject({
      status: 'completed',
      finalResult: 'All done',
      completedAt: '2030-01-01T00:00:09.500Z',
      updatedAt: '2030-01-01T00:00:09.500Z',
    });
    expect(record.prompts[0]).toMatchObject({
      status: 'succeeded',
      startedAt: '2030-01-01T00:00:01.000Z',
      completedAt: '2030-01-01T00:00:09.500Z',
      finalResult: 'All done',
    });
  });

  it('reads failed after a failed latest prompt, with its error', async () => {
    const created = await createTask(api, alice, { prompt: 'doomed' });
    await recordPrompts(api, 'acme', created.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'failed', error: 'executor exited with 1' })),
    );
    const record = await getTask(api, alice, created.id);
    expect(record.status).toBe('failed');
    expect(record.prompts[0]?.error).toBe('executor exited with 1');
  });

  it("answers 404 for another organization's task and for ids that are not UUIDs", async () => {
    const theirs = await createTask(api, globex, { prompt: 'secret plans' });
    const res = await call(api, `/v1/tasks/${theirs.id}`, { key: alice });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe('not_found');
    expect((await call(api, '/v1/tasks/not-a-uuid', { key: alice })).status).toBe(404);
  });
});

describe('private tasks', () => {
  it("are invisible to another user's key of the same organization, and visible to their owner", async () => {
    const created = await createTask(api, alice, { prompt: 'diary', visibility: 'private' });
    expect((await getTask(api, alice, created.id)).visibility).toBe('private');
    expect((await call(api, `/v1/tasks/${created.id}`, { key: bob })).status).toBe(404);
    const bobs = TaskListSchema.parse(await (await call(api, '/v1/tasks?limit=100', { key: bob })).json());
    expect(bobs.data.map((t) => t.id)).not.toContain(created.id);
    const alices = TaskListSchema.parse(
      await (await call(api, '/v1/tasks?limit=100', { key: alice })).json(),
    );
    expect(alices.data.map((t) => t.id)).toContain(created.id);
    for (const [method, path, body] of [
      ['POST', '/prompts', { prompt: 'x' }],
      ['POST', '/cancel', undefined],
      ['PATCH', '/visibility', { visibility: 'shared' }],
      ['DELETE', '', undefined],
    ] as const) {
      const res = await call(api, `/v1/tasks/${created.id}${path}`, { key: bob, method, body });
      expect(res.status).toBe(404);
    }
  });

  it('shared tasks are visible to every key of the organization', async () => {
    const created = await createTask(api, alice, { prompt: 'team work' });
    expect((await getTask(api, bob, created.id)).id).toBe(created.id);
  });
});

describe('GET /v1/tasks', () => {
  it('lists newest first in the list envelope, without prompt texts', async () => {
    const key = await api.key({ org: 'lister' });
    const made = [];
    for (const [title, prompt] of [
      ['one', 'first secret'],
      ['two', 'second secret'],
      ['three', 'third secret'],
    ]) {
      made.push(await createTask(api, key, { prompt, title }));
    }
    const res = await call(api, '/v1/tasks', { key });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('secret');
    const list = TaskListSchema.parse(JSON.parse(text));
    expect(list).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(list.data.map((t) => t.id)).toEqual(made.map((t) => t.id).reverse());
    expect(list.data[0]?.prompts[0]).not.toHaveProperty('prompt');
    expect(list.data[0]?.prompts[0]?.status).toBe('pending');

    const page = TaskListSchema.parse(await (await call(api, '/v1/tasks?limit=1&offset=1', { key })).json());
    expect(page.data.map((t) => t.id)).toEqual([made[1]?.id]);
    expect(page.total).toBe(3);
  });

  it('filters by status and by workspaceId, and leaves deleted tasks out', async () => {
    const key = await api.key({ org: 'filters' });
    const running = await createTask(api, key, { prompt: 'r' });
    const done = await createTask(api, key, { prompt: 'd', workspaceId: running.workspaceId });
    const elsewhere = await createTask(api, key, { prompt: 'e' });
    const deleted = await createTask(api, key, { prompt: 'x', workspaceId: running.workspaceId });
    await recordPrompts(api, 'filters', done.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'succeeded' })),
    );
    expect((await call(api, `/v1/tasks/${deleted.id}`, { key, method: 'DELETE' })).status).toBe(204);

    const ids = async (query: string): Promise<string[]> => {
      const res = await call(api, `/v1/tasks${query}`, { key });
      expect(res.status).toBe(200);
      return TaskListSchema.parse(await res.json()).data.map((t) => t.id);
    };
    expect((await ids('')).sort()).toEqual([running.id, done.id, elsewhere.id].sort());
    expect((await ids('?status=running')).sort()).toEqual([running.id, elsewhere.id].sort());
    expect(await ids('?status=completed')).toEqual([done.id]);
    expect(await ids('?status=failed')).toEqual([]);
    expect((await ids(`?workspaceId=${running.workspaceId}`)).sort()).toEqual([running.id, done.id].sort());
    expect(await ids(`?workspaceId=${running.workspaceId}&status=completed`)).toEqual([done.id]);
    expect((await call(api, '/v1/tasks?status=exploded', { key })).status).toBe(400);
    expect((await call(api, '/v1/tasks?colour=red', { key })).status).toBe(400);
  });

  it('walks pages with neither repeat nor gap while the operator records progress between pages, counting only what the caller may see', async () => {
    const owner = await api.key({ org: 'walker', user: 'olga' });
    const other = await api.key({ org: 'walker', user: 'pete' });
    const mine: string[] = [];
    for (let i = 0; i < 9; i++) {
      const visibility = i % 3 === 0 ? 'private' : 'shared';
      mine.push((await createTask(api, i % 2 === 0 ? owner : other, { prompt: `p${i}`, visibility })).id);
    }
    const hiddenFromOwner = (await createTask(api, other, { prompt: 'not yours', visibility: 'private' })).id;
    const seen: string[] = [];
    let total: number | undefined;
    for (let offset = 0; offset < 15; offset += 5) {
      const page = TaskListSchema.parse(
        await (await call(api, `/v1/tasks?limit=5&offset=${offset}`, { key: owner })).json(),
      );
      total ??= page.total;
      expect(page.total).toBe(total);
      seen.push(...page.data.map((task) => task.id));
      // Between pages the operator records every task's prompts as running: nothing may move.
      for (const id of mine)
        await recordPrompts(api, 'walker', id, (task) =>
          task.spec.prompts.map((p) => ({ id: p.id, status: 'running' })),
        );
    }
    const visible = mine.filter((_id, i) => i % 3 !== 0 || i % 2 === 0);
    expect(total).toBe(visible.length);
    expect(seen).toEqual([...visible].reverse());
    expect(seen).not.toContain(hiddenFromOwner);
  });

  it("never lists another organization's tasks", async () => {
    const theirs = await createTask(api, globex, { prompt: 'theirs' });
    const list = TaskListSchema.parse(await (await call(api, '/v1/tasks?limit=100', { key: alice })).json());
    expect(list.data.map((t) => t.id)).not.toContain(theirs.id);
  });
});

describe('OpenAPI', () => {
  it('documents the task routes from their schemas, unknown body fields accepted', async () => {
    const doc = (await (await call(api, '/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId: string; requestBody?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const operations = [
      ['/v1/tasks', 'post', 'createTask'],
      ['/v1/tasks', 'get', 'listTasks'],
      ['/v1/tasks/{id}', 'get', 'getTask'],
      ['/v1/tasks/{id}', 'delete', 'deleteTask'],
      ['/v1/tasks/{id}/prompts', 'post', 'addPrompt'],
      ['/v1/tasks/{id}/cancel', 'post', 'cancelTask'],
      ['/v1/tasks/{id}/visibility', 'patch', 'setTaskVisibility'],
      ['/v1/tasks/{id}/events', 'get', 'streamTaskEvents'],
      ['/v1/tasks/{id}/content', 'get', 'getTaskContent'],
      ['/v1/tasks/{id}/prompts/{promptId}/events', 'get', 'listPromptEvents'],
    ] as const;
    for (const [path, method, operationId] of operations) {
      expect(doc.paths[path]?.[method]?.operationId).toBe(operationId);
    }
    expect(doc.paths['/v1/share/{token}']?.get).toMatchObject({
      operationId: 'readSharedTask',
      security: [],
    });
    expect(doc.paths['/v1/tasks']?.post?.requestBody).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateTaskRequest' } } },
    });
    expect(doc.components.schemas.CreateTaskRequest).toMatchObject({ type: 'object', required: ['prompt'] });
    expect(JSON.stringify(doc.components.schemas.CreateTaskRequest)).not.toContain(
      '"additionalProperties":false',
    );
  });
});
