// The task records GET /v1/tasks/:id and GET /v1/tasks present once per task version
// (api/task/record-cache.ts): what they answer from the cache must be byte for byte what a fresh
// presentation of the current task answers, after every write, and never another organization's.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { taskPresentation } from '../../../api/task/access.js';
import { presentApiTask, presentApiTaskListItem } from '../../../api/task/present.js';
import { TaskRecordCache } from '../../../api/task/record-cache.js';
import type { Task } from '../../../crds/index.js';
import { call } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { createTask, namespaceOf, recordPrompts, startTasksApi } from './tasks-support.js';

let api: TestApi, alice: string, globex: string;
beforeAll(async () => {
  ({ api, alice, globex } = await startTasksApi());
});
afterAll(() => api.stop());

/** What a presenter that never saw the task answers for it now (the test server's presentation). */
const fresh = () =>
  new TaskRecordCache(
    taskPresentation({ publicUrl: 'http://agentry.test', installationKey: api.installationKey }),
  );

const cachedTask = (id: string): Task => {
  const task = api.readModel.tasks.get(namespaceOf('acme'), id);
  if (task === undefined) throw new Error(`task ${id} is not cached`);
  return task;
};

const bodyOf = async (path: string, key: string): Promise<string> => {
  const res = await call(api, path, { key });
  expect(res.status).toBe(200);
  return res.text();
};

const finished = (task: Task) =>
  task.spec.prompts.map((prompt) => ({
    id: prompt.id,
    status: 'succeeded' as const,
    startedAt: new Date().toISOString(),
    completedAt: new Date().toISOString(),
    finalResult: 'done',
  }));

describe('task records presented once per version', () => {
  it('GET /v1/tasks/:id answers the new record after the operator records progress, as a fresh presentation does', async () => {
    const { id } = await createTask(api, alice, { prompt: 'cache me' });
    const before = await bodyOf(`/v1/tasks/${id}`, alice);
    expect(await bodyOf(`/v1/tasks/${id}`, alice)).toBe(before);

    await recordPrompts(api, 'acme', id, finished);
    const after = await bodyOf(`/v1/tasks/${id}`, alice);

    expect(after).not.toBe(before);
    expect(after).toBe(JSON.stringify(presentApiTask(cachedTask(id), fresh(), api.readModel)));
  });

  it('GET /v1/tasks answers the new list item after the operator records progress, as a fresh presentation does', async () => {
    const { id } = await createTask(api, alice, { prompt: 'list me' });
    const before = await bodyOf('/v1/tasks?limit=1', alice);

    await recordPrompts(api, 'acme', id, finished);
    const after = await bodyOf('/v1/tasks?limit=1', alice);

    expect(after).not.toBe(before);
    const item = presentApiTaskListItem(cachedTask(id), fresh(), api.readModel);
    expect(JSON.stringify((JSON.parse(after) as { data: unknown[] }).data[0])).toBe(JSON.stringify(item));
  });

  it("another organization's key gets 404 for a task whose record is cached", async () => {
    const { id } = await createTask(api, alice, { prompt: 'mine only' });
    await bodyOf(`/v1/tasks/${id}`, alice);

    const res = await call(api, `/v1/tasks/${id}`, { key: globex });

    expect(res.status).toBe(404);
  });
});
