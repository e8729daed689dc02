// The task API on a test server with an embedded store; the operator's part is played by the test.
// This file: reading one task, and which keys may see a private one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  ISO_MILLIS,
  TaskListSchema,
  createTask,
  errorOf,
  getTask,
  recordPrompts,
  startTasksApi,
} from './tasks-support.js';

let api: TestApi, alice: string, bob: string, globex: string;
beforeAll(async () => {
  ({ api, alice, bob, globex } = await startTasksApi());
});
afterAll(() => api.stop());

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
        usage: null,
        failureReason: null,
      },
    ]);
    expect(record).toMatchObject({ budget: null, usage: null, egressDenials: [] });
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

  it("shows the model gateway's usage, a budget failure and the egress proxy's denials", async () => {
    const created = await createTask(api, alice, { prompt: 'spend', budget: { maxCostUsd: 5 } });
    const usage = { requests: 3, inputTokens: 1200, outputTokens: 300, costUsd: 5.25 };
    const denial = {
      host: 'pastebin.com',
      port: 443,
      reason: 'not_allowed' as const,
      firstAt: '2030-01-01T00:00:02Z',
      lastAt: '2030-01-01T00:00:03Z',
      count: 2,
    };
    await recordPrompts(
      api,
      'acme',
      created.id,
      (task) =>
        task.spec.prompts.map((p) => ({
          id: p.id,
          status: 'failed',
          error: "the task's budget of $5.00 was reached",
          failureReason: 'budget_exceeded',
          usage,
        })),
      { usage: { ...usage, updatedAt: '2030-01-01T00:00:04Z' }, egressDenials: [denial] },
    );
    const record = await getTask(api, alice, created.id);
    expect(record).toMatchObject({
      status: 'failed',
      budget: { maxCostUsd: 5 },
      usage,
      egressDenials: [denial],
    });
    expect(record.usage).not.toHaveProperty('updatedAt');
    expect(record.prompts[0]).toMatchObject({ failureReason: 'budget_exceeded', usage });
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
