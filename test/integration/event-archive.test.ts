// The event archive end to end on the embedded default: finished prompts' events are copied to
// object storage, and GET /v1/tasks/:id/events replays them while the workspace sleeps and after it
// is deleted. Real runner processes run `shell` prompts (bash scripts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { archivePromptEvents } from '../../operator/task/artifacts/event-archive.js';
import { artifactPrefix, promptEventsKey } from '../../platform/objectstore/keys.js';
import { RunnerClient } from '../../platform/runner-client.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';
import { until } from '../support/until.js';
import type { StreamRead } from '../support/sse.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;
let taskId: string;
let workspace: string;
let promptIds: string[];
/** Every event of the task, read live from the runner while the workspace ran. */
let reference: StreamRead;

/** The task's stream: the latest prompt's by default, the whole task with `all`. */
const streamOf = (
  options: { lastEventId?: number; promptId?: string; all?: boolean } = {},
): Promise<StreamRead> =>
  readTaskStream(
    `${api.url}/v1/tasks/${taskId}/events${options.promptId === undefined ? '' : `?promptId=${options.promptId}`}${options.all === true ? '?all=true' : ''}`,
    {
      key,
      timeoutMs: 60_000,
      ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }),
    },
  );

const withoutSseId = (events: StreamRead['events']): TaskEvent[] =>
  events.map(({ sseId: _id, ...event }) => event);

async function archivedBytes(promptId: string): Promise<string | undefined> {
  const got = await api.objectStore.get(promptEventsKey(NAMESPACE, taskId, promptId));
  if (got === undefined) return undefined;
  let text = '';
  for await (const chunk of got.body) text += String(chunk);
  return text;
}

async function workspaceOf(): Promise<AgentComputer> {
  const ac = await api.store.get(AgentComputerType, NAMESPACE, workspace);
  if (ac === undefined) throw new Error(`workspace ${workspace} is gone`);
  return ac;
}

/** Whether anything still listens at the runner's old endpoint. */
async function listening(endpoint: string): Promise<boolean> {
  try {
    await fetch(`${endpoint}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-event-archive-' });
  ({ api } = stack);
  key = await api.key({ org: 'acme' });
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: 'echo one\necho two' },
  });
  expect(res.status).toBe(201);
  ({ id: taskId, workspaceId: workspace } = (await res.json()) as { id: string; workspaceId: string });
  expect((await streamOf()).done?.status).toBe('completed');
  const second = await call(api, `/v1/tasks/${taskId}/prompts`, {
    key,
    method: 'POST',
    body: {
      prompt:
        'mkdir -p artifacts && echo quarterly > artifacts/report.txt\nfor i in 1 2 3; do echo line-$i; done',
    },
  });
  expect(second.status).toBe(201);
  expect((await streamOf()).done?.status).toBe('completed');
  reference = await streamOf({ all: true });
  expect(reference.done?.status).toBe('completed');
  const task = await api.store.get(TaskType, NAMESPACE, taskId);
  promptIds = task?.spec.prompts.map((prompt) => prompt.id) ?? [];
  expect(promptIds).toHaveLength(2);
}, 120_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

describe('archiving a finished prompt', () => {
  it('puts its events in object storage as JSON lines in seq order, and records when', async () => {
    const task = await api.store.get(TaskType, NAMESPACE, taskId);
    for (const [index, promptId] of promptIds.entries()) {
      expect(task?.status?.prompts?.[index]?.archivedAt).toEqual(expect.any(String));
      const lines = (await archivedBytes(promptId))?.trimEnd().split('\n') ?? [];
      const archived = lines.map((line) => JSON.parse(line) as TaskEvent);
      expect(archived).toEqual(withoutSseId(reference.events).filter((event) => event.promptId === promptId));
    }
  });

  it('is idempotent: archiving again writes the same bytes, and the recorded time stays', async () => {
    const ac = await workspaceOf();
    const runner = new RunnerClient({
      endpoint: ac.status?.endpoint ?? '',
      token: api.installationKey.runnerToken(ac),
    });
    const first = promptIds[0] ?? '';
    const before = await archivedBytes(first);
    const recorded = (await api.store.get(TaskType, NAMESPACE, taskId))?.status?.prompts?.[0]?.archivedAt;
    const target = { namespace: NAMESPACE, task: taskId, promptId: first };
    expect(await archivePromptEvents(runner, api.objectStore, target)).toBe('archived');
    expect(await archivedBytes(first)).toBe(before);
    stack.operator.notifyTask(NAMESPACE, taskId);
    await sleep(500);
    expect((await api.store.get(TaskType, NAMESPACE, taskId))?.status?.prompts?.[0]?.archivedAt).toBe(
      recorded,
    );
  });
});

/** The replays every workspace state below must serve identically. */
function replayTests(state: string): void {
  it(`replays every event in order with all=true and ends with done (${state})`, async () => {
    const stream = await streamOf({ all: true });
    expect(stream.status).toBe(200);
    expect(withoutSseId(stream.events)).toEqual(withoutSseId(reference.events));
    expect(stream.events.map((event) => event.seq)).toEqual(stream.events.map((_e, i) => i));
    expect(stream.done).toEqual(reference.done);
  });

  it(`resumes after Last-Event-ID without repeating or skipping (${state})`, async () => {
    const stream = await streamOf({ lastEventId: 3 });
    expect(withoutSseId(stream.events)).toEqual(
      withoutSseId(reference.events).filter((event) => event.seq > 3),
    );
    expect(stream.done?.status).toBe('completed');
  });

  it(`streams the latest prompt's events only when asked for nothing else (${state})`, async () => {
    const latest = promptIds[1] ?? '';
    const stream = await streamOf();
    expect(withoutSseId(stream.events)).toEqual(
      withoutSseId(reference.events).filter((event) => event.promptId === latest),
    );
    expect(stream.done).toEqual(reference.done);
  });

  it(`replays one prompt's events with promptId (${state})`, async () => {
    const promptId = promptIds[1] ?? '';
    const stream = await streamOf({ promptId });
    expect(withoutSseId(stream.events)).toEqual(
      withoutSseId(reference.events).filter((event) => event.promptId === promptId),
    );
    expect(stream.done).toMatchObject({ status: 'completed', finalResult: 'line-1\nline-2\nline-3' });
  });

  it(`answers the JSON prompt-events route from the archive (${state})`, async () => {
    const promptId = promptIds[0] ?? '';
    const res = await call(api, `/v1/tasks/${taskId}/prompts/${promptId}/events`, { key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { events: TaskEvent[]; lastSeq: number };
    const own = withoutSseId(reference.events).filter((event) => event.promptId === promptId);
    expect(body.events).toEqual(own);
    // The prompt's own last event, not the task's (a client resumes that prompt from it).
    expect(body.lastSeq).toBe(own.at(-1)?.seq);
  });
}

describe('while the workspace runs', () => {
  replayTests('running');
});

describe('after the workspace hibernated', () => {
  beforeAll(async () => {
    const endpoint = (await workspaceOf()).status?.endpoint ?? '';
    const res = await call(api, `/v1/agent-computers/${workspace}/stop`, { key, method: 'POST' });
    expect(res.status).toBe(202);
    await until('the runner process to be gone', async () =>
      (await listening(endpoint)) ? undefined : true,
    );
    await until('the API to see the workspace hibernated', async () => {
      const got = await call(api, `/v1/agent-computers/${workspace}`, { key });
      return ((await got.json()) as { status: string }).status === 'hibernated' ? true : undefined;
    });
  }, 90_000);

  replayTests('hibernated');

  it('serves the artifact the prompt wrote, from object storage', async () => {
    const res = await call(api, `/v1/workspaces/${workspace}/artifacts/report.txt`, { key });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('quarterly\n');
    const list = (await (await call(api, `/v1/workspaces/${workspace}/artifacts`, { key })).json()) as {
      data: { filename: string }[];
    };
    expect(list.data.map((artifact) => artifact.filename)).toEqual(['report.txt']);
  });
});

describe('after the workspace was deleted', () => {
  beforeAll(async () => {
    const res = await call(api, `/v1/agent-computers/${workspace}`, { key, method: 'DELETE' });
    expect(res.status).toBe(204);
    await until('the workspace to be gone', async () =>
      (await api.store.get(AgentComputerType, NAMESPACE, workspace)) === undefined ? true : undefined,
    );
  }, 90_000);

  replayTests('deleted');

  it("removes the workspace's artifacts from object storage", async () => {
    const left = await api.objectStore.list(artifactPrefix(NAMESPACE, workspace));
    expect(left.items).toEqual([]);
  });
});

describe('a hibernated workspace resumed by a new prompt', () => {
  it('streams the archived prompt from storage, then the new one live, each seq once and in order', async () => {
    const created = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: { executor: 'shell', prompt: 'echo before-sleep' },
    });
    const { id, workspaceId } = (await created.json()) as { id: string; workspaceId: string };
    const read = (): Promise<StreamRead> =>
      readTaskStream(`${api.url}/v1/tasks/${id}/events?all=true`, { key, timeoutMs: 90_000 });
    const first = await read();
    expect(first.done?.status).toBe('completed');
    const ac = await api.store.get(AgentComputerType, NAMESPACE, workspaceId);
    const endpoint = ac?.status?.endpoint ?? '';
    expect((await call(api, `/v1/agent-computers/${workspaceId}/stop`, { key, method: 'POST' })).status).toBe(
      202,
    );
    await until('the runner process to be gone', async () =>
      (await listening(endpoint)) ? undefined : true,
    );
    const sent = await call(api, `/v1/tasks/${id}/prompts`, {
      key,
      method: 'POST',
      body: { prompt: 'echo after-wake' },
    });
    expect(sent.status).toBe(201);
    const stream = await read();
    expect(stream.done).toMatchObject({ status: 'completed', finalResult: 'after-wake' });
    expect(withoutSseId(stream.events).slice(0, first.events.length)).toEqual(withoutSseId(first.events));
    expect(stream.events.map((event) => event.seq)).toEqual(stream.events.map((_e, i) => i));
    expect(stream.events.length).toBeGreaterThan(first.events.length);
  }, 120_000);
});
