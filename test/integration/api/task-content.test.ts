// GET /v1/tasks/:id/content where the embedded stack cannot go: a runner that never answers, and
// visibility between users. The operator's part is played by writing Task and workspace status.
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { ContentShape } from './hosted-client-shapes.js';
import { markReady } from './tasks-sse.js';
import { createTask, namespaceOf, recordPrompts } from './tasks-support.js';

let api: TestApi;
let alice: string;
let bob: string;
/** Accepts connections and requests, and answers none of them. */
let silent: Server;
const waiting: ServerResponse[] = [];

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.key({ org: 'acme', user: 'alice' });
  bob = await api.key({ org: 'acme', user: 'bob' });
  silent = createServer((_req, res) => {
    waiting.push(res);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const res of waiting) res.destroy();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
  await api.stop();
});

describe('GET /v1/tasks/:id/content', () => {
  it('answers within its bound, saying the events are unavailable, when the runner never answers', async () => {
    const created = await createTask(api, alice, { prompt: 'echo hi', executor: 'shell' });
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    await markReady(api, namespaceOf('acme'), created.workspaceId, `http://127.0.0.1:${address.port}`);
    await recordPrompts(api, 'acme', created.id, (task) =>
      task.spec.prompts.map((prompt) => ({
        id: prompt.id,
        status: 'running',
        dispatchedAt: new Date().toISOString(),
        startedAt: new Date().toISOString(),
      })),
    );
    const res = await call(api, `/v1/tasks/${created.id}/content?include=events`, { key: alice });
    const content = ContentShape.parse(await res.json());
    expect(content.prompts).toEqual([
      expect.objectContaining({ status: 'running', response: null, events: [], eventsStatus: 'unavailable' }),
    ]);
  }, 30_000);

  it("answers a pending prompt's events as complete and empty, without asking a runner", async () => {
    const created = await createTask(api, alice, { prompt: 'echo later', executor: 'shell' });
    const res = await call(api, `/v1/tasks/${created.id}/content?include=events`, { key: alice });
    const content = ContentShape.parse(await res.json());
    expect(content).toMatchObject({
      id: created.id,
      status: 'running',
      prompts: [{ status: 'pending', response: null, events: [], eventsStatus: 'complete' }],
    });
  });

  it("is 404 for another user's private task, as GET /tasks/:id", async () => {
    const created = await createTask(api, alice, { prompt: 'mine', visibility: 'private' });
    expect((await call(api, `/v1/tasks/${created.id}/content`, { key: bob })).status).toBe(404);
    expect((await call(api, `/v1/tasks/${created.id}`, { key: bob })).status).toBe(404);
    expect((await call(api, `/v1/tasks/${created.id}/content`, { key: alice })).status).toBe(200);
  });
});
