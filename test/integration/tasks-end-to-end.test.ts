// Tasks end to end on the embedded default: API server, operator and real runner processes running
// real prompts with the `shell` executor (bash). Nothing here is faked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskRecordSchema } from '../../api/task/present.js';
import type { TaskRecord } from '../../api/task/present.js';
import { AgentComputerType } from '../../crds/index.js';
import { workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { hostPidOf } from '../support/host-pids.js';
import { readTaskStream } from '../support/sse.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let dir: string;
let key: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-tasks-e2e-' });
  ({ api, dir } = stack);
  key = await api.key({ org: 'acme' });
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

interface Created {
  id: string;
  workspaceId: string;
}

async function createTask(body: Record<string, unknown>, workspaceId?: string): Promise<Created> {
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', ...body, ...(workspaceId === undefined ? {} : { workspaceId }) },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Created;
}

async function getTask(id: string): Promise<TaskRecord> {
  const res = await call(api, `/v1/tasks/${id}`, { key });
  expect(res.status).toBe(200);
  return TaskRecordSchema.parse(await res.json());
}

async function sendPrompt(id: string, prompt: string): Promise<string> {
  const res = await call(api, `/v1/tasks/${id}/prompts`, { key, method: 'POST', body: { prompt } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { promptId: string }).promptId;
}

const streamOf = (id: string, options: { lastEventId?: number; stopAfter?: number } = {}) =>
  readTaskStream(`${api.url}/v1/tasks/${id}/events`, { key, timeoutMs: 90_000, ...options });

const codeDir = (workspaceId: string): string => workspacePaths(dir, NAMESPACE, workspaceId).code;

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

describe('a task from creation to its result', () => {
  it('streams its events in order from init to result, then done with completed', async () => {
    const task = await createTask({ prompt: 'echo hello\necho world' });
    const stream = await streamOf(task.id);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const types = stream.events.map((e) => e.eventType);
    expect(types[0]).toBe('status');
    expect(stream.events[0]?.payload).toEqual({ status: 'running' });
    expect(types.indexOf('init')).toBeLessThan(types.indexOf('result'));
    expect(stream.events.filter((e) => e.eventType === 'text').map((e) => e.payload.content)).toEqual([
      'hello',
      'world',
    ]);
    expect(stream.events.at(-1)?.payload).toMatchObject({ status: 'succeeded' });
    expect(stream.events.map((e) => e.seq)).toEqual(stream.events.map((_e, i) => i));
    expect(stream.events.map((e) => e.sseId)).toEqual(stream.events.map((e) => String(e.seq)));
    expect(stream.done).toEqual({
      status: 'completed',
      lastSeq: stream.events.at(-1)?.seq,
      finalResult: 'hello\nworld',
    });
    const record = await getTask(task.id);
    expect(record).toMatchObject({ status: 'completed', finalResult: 'hello\nworld' });
    expect(record.prompts[0]).toMatchObject({ status: 'succeeded', finalResult: 'hello\nworld' });
  });

  it("names the workspace's /code as the init event's cwd, never the server's data directory", async () => {
    const task = await createTask({ prompt: 'echo here' });
    const stream = await streamOf(task.id);
    const init = stream.events.find((e) => e.eventType === 'init');
    expect(init?.payload).toMatchObject({ cwd: '/code', executor: 'shell' });
    expect(JSON.stringify(stream.events)).not.toContain(dir);
  });

  it('ends failed when the command fails, with the reason on the prompt', async () => {
    const task = await createTask({ prompt: 'echo about to fail\nexit 3' }, undefined);
    const stream = await streamOf(task.id);
    expect(stream.done?.status).toBe('failed');
    expect(stream.events.some((e) => e.eventType === 'error')).toBe(true);
    const record = await getTask(task.id);
    expect(record.status).toBe('failed');
    expect(record.prompts[0]?.error).toMatch(/code 3/);
  });

  it('runs a follow-up prompt in the same /code as the first', async () => {
    const task = await createTask({ prompt: 'echo from-the-first-prompt > marker.txt' });
    await streamOf(task.id);
    await sendPrompt(task.id, 'cat marker.txt');
    const stream = await streamOf(task.id);
    expect(stream.done).toMatchObject({ status: 'completed', finalResult: 'from-the-first-prompt' });
    expect((await getTask(task.id)).prompts.map((p) => p.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('runs another task on the same workspace when given its workspaceId, with no new workspace', async () => {
    const first = await createTask({ prompt: 'echo shared > shared.txt' });
    await streamOf(first.id);
    const before = (await api.store.list(AgentComputerType, { namespace: NAMESPACE })).items.length;
    const second = await createTask({ prompt: 'cat shared.txt' }, first.workspaceId);
    expect(second.workspaceId).toBe(first.workspaceId);
    expect((await streamOf(second.id)).done?.finalResult).toBe('shared');
    expect((await api.store.list(AgentComputerType, { namespace: NAMESPACE })).items.length).toBe(before);
  });
});

describe('prompts sent back to back', () => {
  it('run one after the other, the second pending meanwhile', async () => {
    const task = await createTask({
      prompt: 'echo first >> order.txt\nsleep 2\necho first-done >> order.txt',
    });
    await sendPrompt(task.id, 'echo second >> order.txt');
    const whileFirstRuns = await until('the first prompt to run', async () => {
      const record = await getTask(task.id);
      return record.prompts[0]?.status === 'running' ? record : undefined;
    });
    expect(whileFirstRuns.prompts[1]?.status).toBe('pending');
    expect(whileFirstRuns.status).toBe('running');
    expect((await streamOf(task.id)).done?.status).toBe('completed');
    const order = await readFile(join(codeDir(task.workspaceId), 'order.txt'), 'utf8');
    expect(order.trim().split('\n')).toEqual(['first', 'first-done', 'second']);
  });
});

describe('cancel', () => {
  it('ends a running sleep 600 as canceled within seconds, leaving no process behind', async () => {
    const task = await createTask({ prompt: 'echo $$ > shell.pid\nsleep 600 &\necho $! > sleep.pid\nwait' });
    const code = codeDir(task.workspaceId);
    const pids = await until('the prompt to start its processes', async () => {
      const shell = await readFile(join(code, 'shell.pid'), 'utf8').catch(() => '');
      const child = await readFile(join(code, 'sleep.pid'), 'utf8').catch(() => '');
      if (shell.trim() === '' || child.trim() === '') return undefined;
      // The workspace has its own PID namespace: its pids are not the host's.
      const host = await Promise.all([hostPidOf(Number(shell), code), hostPidOf(Number(child), code)]);
      return host.every((pid) => pid !== undefined) ? host : undefined;
    });
    const res = await call(api, `/v1/tasks/${task.id}/cancel`, { key, method: 'POST' });
    expect(res.status).toBe(200);
    expect(TaskRecordSchema.parse(await res.json()).status).toBe('canceled');
    const stream = await streamOf(task.id);
    expect(stream.done?.status).toBe('canceled');
    expect(stream.events.at(-1)?.payload).toMatchObject({ status: 'canceled' });
    await until(
      'every process of the prompt to be gone',
      () => Promise.resolve(pids.every(processGone) ? true : undefined),
      20_000,
    );
  });
});

describe('resuming the event stream', () => {
  it('yields every event exactly once when reconnecting with Last-Event-ID at random points', async () => {
    const task = await createTask({ prompt: 'for i in $(seq 1 40); do echo line-$i; sleep 0.02; done' });
    const seen: number[] = [];
    let last: number | undefined;
    for (let round = 0; round < 50; round++) {
      const stream = await streamOf(task.id, {
        ...(last === undefined ? {} : { lastEventId: last }),
        stopAfter: 1 + Math.floor(Math.random() * 8),
      });
      seen.push(...stream.events.map((e) => e.seq));
      last = seen.at(-1) ?? last;
      if (stream.done !== undefined) break;
    }
    const final = await streamOf(task.id, last === undefined ? {} : { lastEventId: last });
    seen.push(...final.events.map((e) => e.seq));
    expect(final.done?.status).toBe('completed');
    const lastSeq = final.done?.lastSeq ?? -1;
    expect(seen).toEqual(Array.from({ length: lastSeq + 1 }, (_v, i) => i));
  });
});

describe('uploaded files', () => {
  async function upload(filename: string, bytes: string): Promise<string> {
    const res = await call(api, '/v1/files', { key, method: 'POST', body: { filename } });
    expect(res.status).toBe(201);
    const { id, uploadUrl } = (await res.json()) as { id: string; uploadUrl: string };
    expect((await fetch(uploadUrl, { method: 'PUT', body: bytes })).status).toBe(200);
    return id;
  }

  it('reach /code before the prompt runs, and a file never uploaded fails the prompt clearly', async () => {
    const id = await upload('notes.txt', 'uploaded bytes');
    const task = await createTask({ prompt: 'cat notes.txt', files: [{ id, filename: 'notes.txt' }] });
    expect((await streamOf(task.id)).done).toMatchObject({
      status: 'completed',
      finalResult: 'uploaded bytes',
    });

    const missing = '00000000-0000-4000-8000-000000000000';
    const failed = await createTask({
      prompt: 'cat ghost.txt',
      files: [{ id: missing, filename: 'ghost.txt' }],
    });
    expect((await streamOf(failed.id)).done?.status).toBe('failed');
    expect((await getTask(failed.id)).prompts[0]?.error).toBe(
      `file ghost.txt (${missing}) was never uploaded`,
    );
  });
});
