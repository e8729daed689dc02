import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { TaskRecordSchema } from '../../../api/task/present.js';
import { TaskType } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { isStoreError } from '../../../platform/store/types.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
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

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.key({ org: 'acme', user: 'alice' });
  bob = await api.key({ org: 'acme', user: 'bob' });
  await configureOrganization(api, 'acme', (spec) => ({
    ...spec,
    limits: { ...spec.limits, agentComputers: 1000, concurrentTasks: 1000 },
  }));
});
afterAll(async () => {
  await api.stop();
});

const PromptCreatedSchema = z.object({ promptId: z.uuid() });
const VisibilitySchema = z.object({ visibility: z.string(), shareUrl: z.string().nullable() });

async function addPrompt(id: string, body: unknown, key = alice): Promise<Response> {
  return call(api, `/v1/tasks/${id}/prompts`, { key, method: 'POST', body });
}

async function setVisibility(id: string, visibility: string): Promise<z.infer<typeof VisibilitySchema>> {
  const res = await call(api, `/v1/tasks/${id}/visibility`, {
    key: alice,
    method: 'PATCH',
    body: { visibility },
  });
  expect(res.status).toBe(200);
  return VisibilitySchema.parse(await res.json());
}

/** The path of a share URL on the test server (the public URL is http://agentry.test). */
const sharePath = (shareUrl: string): string => shareUrl.replace('http://agentry.test', '');

describe('POST /v1/tasks/:id/prompts', () => {
  it('appends a follow-up prompt and answers 201 with its id; it waits as pending', async () => {
    const created = await createTask(api, alice, { prompt: 'first' });
    const res = await addPrompt(created.id, {
      prompt: 'second',
      skills: ['review'],
      files: [{ id: randomUUID(), filename: 'notes/todo.md' }],
      executor: 'shell',
    });
    expect(res.status).toBe(201);
    const { promptId } = PromptCreatedSchema.parse(await res.json());
    const stored = await storedTask(api, 'acme', created.id);
    expect(stored.spec.prompts.map((p) => p.text)).toEqual(['first', 'second']);
    expect(stored.spec.prompts[1]).toMatchObject({
      id: promptId,
      skills: ['review'],
      executor: 'shell',
      files: [{ filename: 'notes/todo.md' }],
    });
    const record = await getTask(api, alice, created.id);
    expect(record.status).toBe('running');
    expect(record.prompts.map((p) => [p.prompt, p.status])).toEqual([
      ['first', 'pending'],
      ['second', 'pending'],
    ]);
  });

  it('makes a finished task run again once the operator had recorded it completed', async () => {
    const created = await createTask(api, alice, { prompt: 'one' });
    await recordPrompts(api, 'acme', created.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'succeeded', finalResult: 'ok' })),
    );
    expect((await getTask(api, alice, created.id)).status).toBe('completed');
    expect((await addPrompt(created.id, { prompt: 'two' })).status).toBe(201);
    const record = await getTask(api, alice, created.id);
    expect(record.status).toBe('running');
    expect(record.finalResult).toBeNull(); // the latest prompt has none yet
  });

  it('checks executor and model like POST /tasks: disabled 403, unknown 400, unknown field ignored', async () => {
    const key = await api.key({ org: 'picky' });
    const created = await createTask(api, key, { prompt: 'x' });
    await configureOrganization(api, 'picky', (spec) => ({
      ...spec,
      executors: { default: 'claude', disabled: ['gemini'] },
    }));
    const disabled = await addPrompt(created.id, { prompt: 'y', executor: 'gemini' }, key);
    expect(disabled.status).toBe(403);
    expect((await errorOf(disabled)).code).toBe('agent_disabled');
    const unknown = await addPrompt(created.id, { prompt: 'y', executor: 'nope' }, key);
    expect(unknown.status).toBe(400);
    expect((await errorOf(unknown)).details?.[0]?.path).toBe('executor');
    expect((await addPrompt(created.id, { prompt: 'z'.repeat(100_001) }, key)).status).toBe(400);
    expect((await storedTask(api, 'picky', created.id)).spec.prompts).toHaveLength(1);
    const extra = await addPrompt(created.id, { prompt: 'y', title: 'no' }, key);
    expect(extra.status).toBe(201);
    expect(extra.headers.get('warning')).toContain('ignored unknown fields: title');
    expect((await storedTask(api, 'picky', created.id)).spec.title).toBe('x');
  });

  it('refuses a prompt that takes the task over 900,000 bytes of UTF-8 with limit_exceeded', async () => {
    // 'é' is two bytes in UTF-8: five prompts of 90,000 characters make exactly 900,000 bytes.
    const big = 'é'.repeat(90_000);
    const created = await createTask(api, alice, { prompt: big });
    for (let i = 0; i < 4; i++) expect((await addPrompt(created.id, { prompt: big })).status).toBe(201);
    const res = await addPrompt(created.id, { prompt: 'x' });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe('limit_exceeded');
    expect(error.message).toContain('start a new task on the same workspace');
    expect((await storedTask(api, 'acme', created.id)).spec.prompts).toHaveLength(5);
  });

  it('refuses the 1001st prompt with limit_exceeded', async () => {
    const created = await createTask(api, alice, { prompt: 'p' });
    const task = await storedTask(api, 'acme', created.id);
    const first = task.spec.prompts[0];
    if (first === undefined) throw new Error('no prompt');
    const prompts = Array.from({ length: 1000 }, () => ({ ...first, id: randomUUID() }));
    const written = await api.store.replace(TaskType, { ...task, spec: { ...task.spec, prompts } });
    const res = await addPrompt(created.id, { prompt: 'one too many' });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('limit_exceeded');
    expect((await storedTask(api, 'acme', created.id)).metadata.resourceVersion).toBe(
      written.metadata.resourceVersion,
    );
  });

  it('keeps the prompt and the status when the operator writes status between the read and the write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-tasks-'));
    const inner = await EmbeddedStore.open(join(dir, 'store'));
    let raced = false;
    const conflicts: unknown[] = [];
    const store = interceptingStore(inner, {
      onReplaceError: (err) => conflicts.push(err),
      // The first read of a Task by the API is followed by an operator status write (a conflict).
      afterGet: async (kind, name) => {
        if (kind !== 'Task' || raced) return;
        raced = true;
        const task = await inner.get(TaskType, namespaceOf('acme'), name);
        if (task === undefined) return;
        await inner.replaceStatus(TaskType, {
          ...task,
          status: { prompts: task.spec.prompts.map((p) => ({ id: p.id, status: 'running' as const })) },
        });
      },
    });
    const racy = await startTestApi({ store });
    try {
      const key = await racy.key({ org: 'acme' });
      const created = await createTask(racy, key, { prompt: 'one' });
      const res = await call(racy, `/v1/tasks/${created.id}/prompts`, {
        key,
        method: 'POST',
        body: { prompt: 'two' },
      });
      expect(res.status).toBe(201);
      expect(raced).toBe(true);
      expect(conflicts.map((err) => isStoreError(err, 'Conflict'))).toEqual([true]);
      const task = await inner.get(TaskType, namespaceOf('acme'), created.id);
      expect(task?.spec.prompts.map((p) => p.text)).toEqual(['one', 'two']);
      expect(task?.status?.prompts?.[0]?.status).toBe('running');
    } finally {
      await racy.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('POST /v1/tasks/:id/cancel', () => {
  it('asks to cancel the running and pending prompts; the record reads canceled at once', async () => {
    const created = await createTask(api, alice, { prompt: 'one' });
    expect((await addPrompt(created.id, { prompt: 'two' })).status).toBe(201);
    expect((await addPrompt(created.id, { prompt: 'three' })).status).toBe(201);
    // The operator recorded the first prompt succeeded and the second running; the third waits.
    await recordPrompts(api, 'acme', created.id, (task) => [
      { id: task.spec.prompts[0]?.id ?? '', status: 'succeeded' },
      { id: task.spec.prompts[1]?.id ?? '', status: 'running' },
    ]);
    const res = await call(api, `/v1/tasks/${created.id}/cancel`, { key: alice, method: 'POST' });
    expect(res.status).toBe(200);
    const record = TaskRecordSchema.parse(await res.json());
    expect(record.status).toBe('canceled');
    expect(record.prompts.map((p) => p.status)).toEqual(['succeeded', 'canceled', 'canceled']);
    expect(record.completedAt).not.toBeNull();
    const stored = await storedTask(api, 'acme', created.id);
    expect(stored.spec.prompts.map((p) => p.cancelRequestedAt !== undefined)).toEqual([false, true, true]);
    expect((await getTask(api, bob, created.id)).status).toBe('canceled');
  });

  it('is a no-op 200 on a finished task (nothing is written)', async () => {
    const created = await createTask(api, alice, { prompt: 'done already' });
    const written = await recordPrompts(api, 'acme', created.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'succeeded' })),
    );
    const res = await call(api, `/v1/tasks/${created.id}/cancel`, { key: alice, method: 'POST' });
    expect(res.status).toBe(200);
    expect(TaskRecordSchema.parse(await res.json()).status).toBe('completed');
    expect((await storedTask(api, 'acme', created.id)).metadata.resourceVersion).toBe(
      written.metadata.resourceVersion,
    );
  });
});

describe('DELETE /v1/tasks/:id', () => {
  it('answers 204, cancels unfinished prompts, and every endpoint answers 404 afterwards', async () => {
    const created = await createTask(api, alice, { prompt: 'bye', visibility: 'public' });
    const { shareUrl } = await getTask(api, alice, created.id);
    const promptId = (await storedTask(api, 'acme', created.id)).spec.prompts[0]?.id ?? '';
    expect((await call(api, `/v1/tasks/${created.id}`, { key: alice, method: 'DELETE' })).status).toBe(204);

    const stored = await storedTask(api, 'acme', created.id);
    expect(stored.spec.deletedAt).toBeDefined();
    expect(stored.spec.prompts[0]?.cancelRequestedAt).toBeDefined();
    const id = created.id;
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['POST', '/prompts', { prompt: 'x' }],
      ['POST', '/cancel', undefined],
      ['PATCH', '/visibility', { visibility: 'public' }],
      ['GET', '/events', undefined],
      ['GET', `/prompts/${promptId}/events`, undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const res = await call(api, `/v1/tasks/${id}${path}`, { key: alice, method, body });
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    const list = TaskListSchema.parse(await (await call(api, '/v1/tasks?limit=100', { key: alice })).json());
    expect(list.data.map((t) => t.id)).not.toContain(id);
    expect((await call(api, sharePath(shareUrl ?? ''))).status).toBe(404);
  });

  it("keeps the task's workspace", async () => {
    const created = await createTask(api, alice, { prompt: 'bye' });
    await call(api, `/v1/tasks/${created.id}`, { key: alice, method: 'DELETE' });
    expect((await call(api, `/v1/agent-computers/${created.workspaceId}`, { key: alice })).status).toBe(200);
  });
});

describe('visibility and the share link', () => {
  it('public gives a share link readable without a key; private kills it; public again makes a new one', async () => {
    const created = await createTask(api, alice, { prompt: 'look at this' });
    const made = await setVisibility(created.id, 'public');
    expect(made.visibility).toBe('public');
    expect(made.shareUrl).toMatch(/^http:\/\/agentry\.test\/v1\/share\/[0-9a-f-]{36}\.[A-Za-z0-9_-]+$/);
    expect((await getTask(api, alice, created.id)).shareUrl).toBe(made.shareUrl);

    const shared = await call(api, sharePath(made.shareUrl ?? ''));
    expect(shared.status).toBe(200);
    const record = TaskRecordSchema.parse(await shared.json());
    expect(record).toMatchObject({ id: created.id, visibility: 'public', title: 'look at this' });
    expect(record.prompts[0]?.prompt).toBe('look at this');

    // Setting public again keeps the same link.
    expect((await setVisibility(created.id, 'public')).shareUrl).toBe(made.shareUrl);

    expect(await setVisibility(created.id, 'private')).toEqual({ visibility: 'private', shareUrl: null });
    expect((await call(api, sharePath(made.shareUrl ?? ''))).status).toBe(404);
    expect((await storedTask(api, 'acme', created.id)).spec.shareId).toBeUndefined();

    const again = await setVisibility(created.id, 'public');
    expect(again.shareUrl).not.toBe(made.shareUrl);
    expect((await call(api, sharePath(made.shareUrl ?? ''))).status).toBe(404);
    expect((await call(api, sharePath(again.shareUrl ?? ''))).status).toBe(200);

    expect(await setVisibility(created.id, 'shared')).toEqual({ visibility: 'shared', shareUrl: null });
    expect((await call(api, sharePath(again.shareUrl ?? ''))).status).toBe(404);
  });

  it('answers 404 not_found for forged and malformed share tokens', async () => {
    const created = await createTask(api, alice, { prompt: 'p', visibility: 'public' });
    const { shareUrl } = await getTask(api, alice, created.id);
    const token = sharePath(shareUrl ?? '').replace('/v1/share/', '');
    const [shareId, mac] = token.split('.');
    const forged = [
      `${shareId}.${(mac ?? '').slice(0, -2)}AA`,
      `${randomUUID()}.${mac}`,
      shareId ?? '',
      'garbage',
      `.${mac}`,
    ];
    for (const candidate of forged) {
      const res = await call(api, `/v1/share/${encodeURIComponent(candidate)}`);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe('not_found');
    }
    expect((await call(api, `/v1/share/${token}`)).status).toBe(200);
  });

  it('is counted in /metrics by its route template, like every request', async () => {
    await call(api, '/v1/share/nothing-here');
    const text = await (await call(api, '/metrics')).text();
    expect(text).toMatch(/route="\/v1\/share\/:token",status="404"/);
  });

  it('refuses an unknown visibility with 400', async () => {
    const created = await createTask(api, alice, { prompt: 'p' });
    const res = await call(api, `/v1/tasks/${created.id}/visibility`, {
      key: alice,
      method: 'PATCH',
      body: { visibility: 'everyone' },
    });
    expect(res.status).toBe(400);
  });
});
