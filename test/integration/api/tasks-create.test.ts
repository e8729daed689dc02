// The task API on a test server with an embedded store; the operator's part is played by the test.
// This file: POST /v1/tasks and the OpenAPI document of the task routes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { AgentComputerType, TaskType } from '../../../crds/index.js';
import { ExecutorCatalog } from '../../../platform/executor-catalog.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  ISO_MILLIS,
  configureOrganization,
  createTask,
  createWorkspace,
  errorOf,
  getTask,
  namespaceOf,
  startTasksApi,
  storedTask,
  workspacesOf,
} from './tasks-support.js';

let api: TestApi, alice: string, globex: string;
beforeAll(async () => {
  ({ api, alice, globex } = await startTasksApi());
});
afterAll(() => api.stop());

describe('POST /v1/tasks', () => {
  it('answers 201 with the contract shape and Location, and makes an ephemeral workspace and the Task', async () => {
    const before = (await workspacesOf(api, 'acme')).length;
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

    const workspaces = await workspacesOf(api, 'acme');
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
    const workspaceId = await createWorkspace(api, alice);
    const before = (await workspacesOf(api, 'acme')).length;
    const created = await createTask(api, alice, { prompt: 'hello', workspaceId });
    expect(created.workspaceId).toBe(workspaceId);
    expect(await workspacesOf(api, 'acme')).toHaveLength(before);
    expect((await storedTask(api, 'acme', created.id)).spec.workspace).toBe(workspaceId);
  });

  it("answers 404 not_found for another organization's workspace, and creates nothing", async () => {
    const theirs = await createWorkspace(api, globex);
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
    const workspaceId = await createWorkspace(api, alice);
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
    expect(await workspacesOf(api, 'strict')).toHaveLength(0);
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

  it('stores a budget in the Task spec and answers it in the record', async () => {
    const created = await createTask(api, alice, {
      prompt: 'frugal',
      budget: { maxCostUsd: 2.5, maxTokens: 100_000 },
    });
    expect((await storedTask(api, 'acme', created.id)).spec.budget).toEqual({
      maxCostUsd: 2.5,
      maxTokens: 100_000,
    });
    expect((await getTask(api, alice, created.id)).budget).toEqual({ maxCostUsd: 2.5, maxTokens: 100_000 });
  });

  it.each([
    ['a negative cost', { maxCostUsd: -1 }, 'budget.maxCostUsd'],
    ['a fractional token count', { maxTokens: 1.5 }, 'budget.maxTokens'],
    ['a cost given as text', { maxCostUsd: '5' }, 'budget.maxCostUsd'],
  ])(
    'answers 400 validation_error for a budget with %s, and creates nothing',
    async (_what, budget, path) => {
      const before = (await api.store.list(TaskType, { namespace: namespaceOf('acme') })).items.length;
      const res = await call(api, '/v1/tasks', { key: alice, method: 'POST', body: { prompt: 'x', budget } });
      expect(res.status).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe('validation_error');
      expect(error.details?.map((detail) => detail.path)).toEqual([path]);
      expect((await api.store.list(TaskType, { namespace: namespaceOf('acme') })).items).toHaveLength(before);
    },
  );

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
        modelGateway: [],
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
