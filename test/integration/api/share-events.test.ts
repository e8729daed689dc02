import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import type { PromptState } from '../../../platform/runner-protocol.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { createTask, namespaceOf, recordPrompts, storedTask } from './tasks-support.js';
import { SseStream, runToEnd, startWorkspaceRunner } from './tasks-sse.js';
import type { WorkspaceRunner } from './tasks-sse.js';

// GET /v1/share/:token/events (docs/api.md#web-pages): the share page's live view of a public task,
// the frames of GET /v1/tasks/:id/events without a key, and nothing for a link that grants nothing.

const VisibilitySchema = z.object({ visibility: z.string(), shareUrl: z.string().nullable() });

let api: TestApi;
let key: string;
const runners: WorkspaceRunner[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  api = await startTestApi({ sseKeepaliveMs: 100 });
  key = await api.key({ org: 'acme' });
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop()));
  await api.stop();
});

/** Sets a task's visibility; the path of its share link on this server when public. */
async function setVisibility(id: string, visibility: string): Promise<string | undefined> {
  const res = await call(api, `/v1/tasks/${id}/visibility`, { key, method: 'PATCH', body: { visibility } });
  expect(res.status).toBe(200);
  const { shareUrl } = VisibilitySchema.parse(await res.json());
  return shareUrl?.replace('http://agentry.test', '');
}

/** Opens a share link's event stream with no key, as the share page's EventSource does. */
async function openShared(sharePath: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await SseStream.open(`${api.url}${sharePath}/events`, headers);
  streams.push(stream);
  return stream;
}

/** A public task whose shell prompt ran to its end (recorded by the operator's stand-in). */
async function finishedPublicTask(
  script: string,
): Promise<{ id: string; sharePath: string; lastSeq: number }> {
  const created = await createTask(api, key, { prompt: 'run me', executor: 'shell' });
  const promptId = (await storedTask(api, 'acme', created.id)).spec.prompts[0]?.id ?? '';
  const workspace = await startWorkspaceRunner(api, namespaceOf('acme'), created.workspaceId);
  runners.push(workspace);
  const state: PromptState = await runToEnd(workspace, created.id, promptId, script);
  await recordPrompts(api, 'acme', created.id, () => [
    {
      id: state.promptId,
      status: state.status,
      lastSeq: state.lastSeq,
      finalResult: state.finalResult ?? '',
    },
  ]);
  const sharePath = await setVisibility(created.id, 'public');
  if (sharePath === undefined) throw new Error('no share link');
  return { id: created.id, sharePath, lastSeq: state.lastSeq };
}

describe('GET /v1/share/:token/events', () => {
  it("streams a public task's events and done without a key, as the task's own stream does", async () => {
    const task = await finishedPublicTask('echo one\necho two\necho three\n');
    const shared = await openShared(task.sharePath);
    expect(shared.response.status).toBe(200);
    expect(shared.response.headers.get('content-type')).toBe('text/event-stream');
    await shared.finished();
    const own = await SseStream.open(`${api.url}/v1/tasks/${task.id}/events`, { API_KEY: key });
    streams.push(own);
    await own.finished();
    expect(shared.frames.filter((frame) => frame.comment === undefined)).toEqual(
      own.frames.filter((frame) => frame.comment === undefined),
    );
    expect(shared.done()).toMatchObject({ status: 'completed', lastSeq: task.lastSeq });
  });

  it('resumes after Last-Event-ID with each remaining event exactly once', async () => {
    const task = await finishedPublicTask(Array.from({ length: 8 }, (_, i) => `echo line${i}`).join('\n'));
    const resumed = await openShared(task.sharePath, { 'Last-Event-ID': '3' });
    await resumed.finished();
    const seqs = resumed.events().map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: task.lastSeq - 3 }, (_, i) => i + 4));
  });

  it('answers 404 for a forged token, in the task API shape', async () => {
    const task = await finishedPublicTask('echo hidden\n');
    const forged = `${task.sharePath.slice(0, -4)}AAAA`;
    const res = await call(api, `${forged}/events`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('answers 404 once the task is made private, and for its new link only after it is public again', async () => {
    const task = await finishedPublicTask('echo secret\n');
    await setVisibility(task.id, 'private');
    await eventually(async () => (await call(api, `${task.sharePath}/events`)).status === 404);
    const again = await setVisibility(task.id, 'public');
    expect((await call(api, `${task.sharePath}/events`)).status).toBe(404);
    expect(again).not.toBe(task.sharePath);
  });

  it('answers 404 for a deleted task', async () => {
    const task = await finishedPublicTask('echo gone\n');
    expect((await call(api, `/v1/tasks/${task.id}`, { key, method: 'DELETE' })).status).toBe(204);
    await eventually(async () => (await call(api, `${task.sharePath}/events`)).status === 404);
  });

  it('grants nothing else: artifacts, workspace and follow-ups stay behind the key', async () => {
    const task = await finishedPublicTask('echo only events\n');
    const token = task.sharePath.replace('/v1/share/', '');
    for (const path of [
      `/v1/share/${token}/artifacts`,
      `/v1/share/${token}/prompts`,
      `/v1/share/${token}/content`,
    ]) {
      // Every other /v1 path still asks for a key: the token opens nothing.
      expect((await call(api, path)).status).toBe(401);
    }
    const followUp = await call(api, `/v1/share/${token}/events`, { method: 'POST', body: { prompt: 'x' } });
    expect(followUp.status).toBe(405);
  });
});
