// The task API on a test server with an embedded store; the operator's part is played by the test.
// This file: GET /v1/tasks, its filters and pages.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { TaskListSchema, createTask, recordPrompts, startTasksApi } from './tasks-support.js';

let api: TestApi, alice: string, globex: string;
beforeAll(async () => {
  ({ api, alice, globex } = await startTasksApi());
});
afterAll(() => api.stop());

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
