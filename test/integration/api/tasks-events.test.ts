import { randomInt, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { CreatedPromptSchema, PromptEventsSchema } from '../../../api/task/schemas.js';
import type { PromptState } from '../../../platform/runner-protocol.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  configureOrganization,
  createTask,
  errorOf,
  namespaceOf,
  recordPrompts,
  storedTask,
} from './tasks-support.js';
import {
  SseStream,
  markReady,
  runToEnd,
  shellInvocation,
  startWorkspaceRunner,
  waitForEnd,
} from './tasks-sse.js';
import type { WorkspaceRunner } from './tasks-sse.js';

const KEEPALIVE_MS = 100;
const NS = namespaceOf('acme');

let api: TestApi;
let key: string;
const runners: WorkspaceRunner[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  api = await startTestApi({ sseKeepaliveMs: KEEPALIVE_MS });
  key = await api.key({ org: 'acme' });
  await configureOrganization(api, 'acme', (spec) => ({
    ...spec,
    limits: { ...spec.limits, agentComputers: 1000, concurrentTasks: 1000 },
  }));
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop()));
  await api.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function openStream(path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await SseStream.open(`${api.url}${path}`, { API_KEY: key, ...headers });
  streams.push(stream);
  return stream;
}

async function runner(workspaceId: string): Promise<WorkspaceRunner> {
  const started = await startWorkspaceRunner(api, NS, workspaceId);
  runners.push(started);
  return started;
}

/** A task with its first prompt's id. */
async function newTask(
  body: Record<string, unknown> = {},
): Promise<{ id: string; workspaceId: string; promptId: string }> {
  const created = await createTask(api, key, { prompt: 'run me', executor: 'shell', ...body });
  const promptId = (await storedTask(api, 'acme', created.id)).spec.prompts[0]?.id ?? '';
  return { id: created.id, workspaceId: created.workspaceId, promptId };
}

/** The operator's part once the runner finished a prompt: record it terminal with its lastSeq. */
async function recordEnd(taskId: string, states: PromptState[]): Promise<void> {
  await recordPrompts(api, 'acme', taskId, () =>
    states.map((state) => ({
      id: state.promptId,
      status: state.status,
      lastSeq: state.lastSeq,
      ...(state.startedAt === undefined ? {} : { startedAt: state.startedAt }),
      ...(state.completedAt === undefined ? {} : { completedAt: state.completedAt }),
      ...(state.finalResult === undefined ? {} : { finalResult: state.finalResult }),
    })),
  );
}

const texts = (stream: SseStream): string[] =>
  stream
    .events()
    .filter((event) => event.eventType === 'text')
    .map((event) => String(event.payload.content));

describe('GET /v1/tasks/:id/events with a real runner', () => {
  it('answers with the SSE headers, forwards events in order, and sends done only once the operator records the end', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.response.headers.get('cache-control')).toBe('no-cache');
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');

    const state = await runToEnd(workspace, task.id, task.promptId, 'echo one\necho two\necho three\n');
    expect(state.status).toBe('succeeded');
    await eventually(() => stream.events().at(-1)?.seq === state.lastSeq);
    expect(texts(stream)).toEqual(['one', 'two', 'three']);
    const seqs = stream.events().map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: state.lastSeq + 1 }, (_, i) => i));
    const eventFrames = stream.frames.filter((frame) => frame.event === 'event');
    expect(eventFrames.map((frame) => Number(frame.id))).toEqual(seqs);
    expect(stream.events().every((event) => event.promptId === task.promptId)).toBe(true);

    // The runner is done, but the operator has not recorded it: no done yet, the stream stays open.
    await sleep(300);
    expect(stream.done()).toBeUndefined();
    expect(stream.ended).toBe(false);

    await recordEnd(task.id, [state]);
    await stream.finished();
    expect(stream.done()).toEqual({
      status: 'completed',
      lastSeq: state.lastSeq,
      finalResult: 'one\ntwo\nthree',
    });
    expect(stream.frames.filter((frame) => frame.event === 'done')).toHaveLength(1);
  });

  it('resumes after Last-Event-ID (or a larger after) with every remaining event exactly once', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    const script = Array.from({ length: 12 }, (_, i) => `echo line${i}`).join('\n');
    const state = await runToEnd(workspace, task.id, task.promptId, script);
    await recordEnd(task.id, [state]);

    const full = await openStream(`/v1/tasks/${task.id}/events`);
    await full.finished();
    const all = full.events().map((event) => event.seq);
    expect(all).toHaveLength(state.lastSeq + 1);

    for (let round = 0; round < 3; round++) {
      const point = randomInt(0, state.lastSeq);
      const resumed = await openStream(`/v1/tasks/${task.id}/events`, { 'Last-Event-ID': String(point) });
      await resumed.finished();
      expect(resumed.events().map((event) => event.seq)).toEqual(all.filter((seq) => seq > point));
      expect(resumed.done()?.lastSeq).toBe(state.lastSeq);
    }
    const larger = await openStream(`/v1/tasks/${task.id}/events?after=${state.lastSeq - 1}`, {
      'Last-Event-ID': '0',
    });
    await larger.finished();
    expect(larger.events().map((event) => event.seq)).toEqual([state.lastSeq]);
  });

  it('gives every event exactly once to a client that reconnects mid-prompt with Last-Event-ID', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    const first = await openStream(`/v1/tasks/${task.id}/events`);
    const script = Array.from({ length: 30 }, (_, i) => `echo tick${i}; sleep 0.02`).join('\n');
    await workspace.client.dispatchPrompt(task.id, task.promptId, {
      text: script,
      executor: shellInvocation(),
    });
    await eventually(() => first.events().length >= 5);
    await first.close();
    const lastSeen = first.events().at(-1)?.seq ?? -1;

    const second = await openStream(`/v1/tasks/${task.id}/events`, { 'Last-Event-ID': String(lastSeen) });
    const state = await waitForEnd(workspace, task.id, task.promptId);
    await recordEnd(task.id, [state]);
    await second.finished();
    const seqs = [...first.events(), ...second.events()].map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: state.lastSeq + 1 }, (_, i) => i));
    expect([...texts(first), ...texts(second)]).toEqual(Array.from({ length: 30 }, (_, i) => `tick${i}`));
  });

  it('waits when opened before the first event (workspace still starting), with keepalive comments, never an early done', async () => {
    const task = await newTask();
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    await sleep(KEEPALIVE_MS * 4);
    expect(stream.frames.some((frame) => frame.comment === 'keepalive')).toBe(true);
    expect(stream.frames.every((frame) => frame.comment === 'keepalive')).toBe(true);
    expect(stream.ended).toBe(false);

    // The workspace becomes ready (the stream notices), then the operator dispatches.
    const workspace = await runner(task.workspaceId);
    await sleep(200);
    expect(stream.done()).toBeUndefined();
    const state = await runToEnd(workspace, task.id, task.promptId, 'echo late');
    await eventually(() => texts(stream).includes('late'));
    await recordEnd(task.id, [state]);
    await stream.finished();
    expect(stream.done()?.status).toBe('completed');
  });

  it('filters by promptId: only that prompt, and done once that prompt is recorded terminal', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    const res = await call(api, `/v1/tasks/${task.id}/prompts`, {
      key,
      method: 'POST',
      body: { prompt: 'second' },
    });
    const { promptId: second } = CreatedPromptSchema.parse(await res.json());
    const stream = await openStream(`/v1/tasks/${task.id}/events?promptId=${second}`);
    const one = await runToEnd(workspace, task.id, task.promptId, 'echo from-first');
    const two = await runToEnd(workspace, task.id, second, 'echo from-second');
    await recordEnd(task.id, [one, two]);
    await stream.finished();
    expect(texts(stream)).toEqual(['from-second']);
    expect(stream.events().every((event) => event.promptId === second)).toBe(true);
    expect(stream.done()).toMatchObject({ lastSeq: two.lastSeq, finalResult: 'from-second' });
  });

  it('answers the JSON events of one prompt from the runner', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    const state = await runToEnd(workspace, task.id, task.promptId, 'echo json');
    const res = await call(api, `/v1/tasks/${task.id}/prompts/${task.promptId}/events`, { key });
    expect(res.status).toBe(200);
    const page = PromptEventsSchema.parse(await res.json());
    expect(page.events.map((event) => event.seq)).toEqual(
      Array.from({ length: state.lastSeq + 1 }, (_, i) => i),
    );
    expect(page.events.some((event) => event.eventType === 'text' && event.payload.content === 'json')).toBe(
      true,
    );
    expect(page.lastSeq).toBe(state.lastSeq);
  });

  it('stops reading from the runner when the client goes away', async () => {
    const task = await newTask();
    const workspace = await runner(task.workspaceId);
    // Requests the runner is answering right now (the proxied event stream among them).
    let open = 0;
    workspace.http.server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      open += 1;
      res.on('close', () => {
        open -= 1;
      });
    });
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    await eventually(() => open === 1);
    await stream.close();
    await eventually(() => open === 0, 1000);
  });
});

describe('GET /v1/tasks/:id/events without a runner', () => {
  it('sends done at once for a task the operator recorded finished whose workspace sleeps', async () => {
    const task = await newTask();
    await recordPrompts(api, 'acme', task.id, (t) =>
      t.spec.prompts.map((p) => ({
        id: p.id,
        status: 'failed',
        lastSeq: 7,
        finalResult: 'partial',
        error: 'boom',
      })),
    );
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    await stream.finished();
    expect(stream.done()).toEqual({ status: 'failed', lastSeq: 7, finalResult: 'partial' });
  });

  it('sends done once the operator records a never-dispatched prompt canceled (no events, lastSeq -1)', async () => {
    const task = await newTask();
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    expect((await call(api, `/v1/tasks/${task.id}/cancel`, { key, method: 'POST' })).status).toBe(200);
    await sleep(300); // a cancel request alone is not the end: the operator has not recorded it
    expect(stream.done()).toBeUndefined();
    await recordPrompts(api, 'acme', task.id, (t) =>
      t.spec.prompts.map((p) => ({ id: p.id, status: 'canceled' })),
    );
    await stream.finished();
    expect(stream.done()).toEqual({ status: 'canceled', lastSeq: -1, finalResult: null });
  });

  it('ends the stream when the task is deleted meanwhile', async () => {
    const task = await newTask();
    const stream = await openStream(`/v1/tasks/${task.id}/events`);
    await sleep(100);
    expect((await call(api, `/v1/tasks/${task.id}`, { key, method: 'DELETE' })).status).toBe(204);
    await stream.finished(5000);
    expect(stream.done()).toBeUndefined();
  });

  it('answers 404 for an unknown promptId, and 400 for a malformed after', async () => {
    const task = await newTask();
    const unknown = randomUUID();
    expect((await call(api, `/v1/tasks/${task.id}/events?promptId=${unknown}`, { key })).status).toBe(404);
    expect((await call(api, `/v1/tasks/${task.id}/prompts/${unknown}/events`, { key })).status).toBe(404);
    expect((await call(api, `/v1/tasks/${task.id}/events?after=soon`, { key })).status).toBe(400);
  });

  it("answers 503 service_unavailable for a started prompt's events while the workspace is not running", async () => {
    const task = await newTask();
    const at = new Date().toISOString();
    await recordPrompts(api, 'acme', task.id, (t) =>
      t.spec.prompts.map((p) => ({ id: p.id, status: 'running', dispatchedAt: at, startedAt: at })),
    );
    const res = await call(api, `/v1/tasks/${task.id}/prompts/${task.promptId}/events`, { key });
    expect(res.status).toBe(503);
    const error = await errorOf(res);
    expect(error.code).toBe('service_unavailable');
    expect(error.message).toContain('not running');
    // Ready but nobody listens at the endpoint: the same answer, not a 500.
    await markReady(api, NS, task.workspaceId, 'http://127.0.0.1:9');
    const unreachable = await call(api, `/v1/tasks/${task.id}/prompts/${task.promptId}/events`, { key });
    expect(unreachable.status).toBe(503);
  });

  it('answers an empty page for a prompt that has not started, while its workspace is still starting', async () => {
    const task = await newTask();
    const res = await call(api, `/v1/tasks/${task.id}/prompts/${task.promptId}/events`, { key });
    expect(res.status).toBe(200);
    expect(PromptEventsSchema.parse(await res.json())).toEqual({ events: [], lastSeq: -1 });
  });

  it('F9: a prompt canceled before it ran answers its empty events while the workspace is stopped', async () => {
    const task = await newTask();
    expect((await call(api, `/v1/tasks/${task.id}/cancel`, { key, method: 'POST' })).status).toBe(200);
    // The operator ended it without the runner (the workspace was stopped): never dispatched, never started.
    await recordPrompts(api, 'acme', task.id, (t) =>
      t.spec.prompts.map((p) => ({ id: p.id, status: 'canceled', completedAt: new Date().toISOString() })),
    );
    const res = await call(api, `/v1/tasks/${task.id}/prompts/${task.promptId}/events`, { key });
    expect(res.status).toBe(200);
    expect(PromptEventsSchema.parse(await res.json())).toEqual({ events: [], lastSeq: -1 });
  });
});
