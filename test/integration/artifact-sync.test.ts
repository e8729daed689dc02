// Two-way sync of a workspace's /code/artifacts with object storage, end to end on the embedded
// default: API server, operator and a real runner process running `shell` prompts (bash scripts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import { syncArtifacts } from '../../operator/task/artifacts/sync.js';
import { workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { createLogger } from '../../platform/log.js';
import { artifactKey } from '../../platform/objectstore/keys.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';
import type { StreamRead } from '../support/sse.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;
/** One task (and so one workspace) that every test sends its next prompt to, in file order. */
let taskId: string;
let workspace: string;

const streamOf = (id: string): Promise<StreamRead> =>
  readTaskStream(`${api.url}/v1/tasks/${id}/events`, { key, timeoutMs: 90_000 });

/** Sends a prompt to the shared task and waits for its result (the stream's `done`). */
async function run(script: string): Promise<StreamRead> {
  const res = await call(api, `/v1/tasks/${taskId}/prompts`, {
    key,
    method: 'POST',
    body: { prompt: script },
  });
  expect(res.status).toBe(201);
  const stream = await streamOf(taskId);
  expect(stream.done?.status).toBe('completed');
  return stream;
}

async function stored(filename: string): Promise<string | undefined> {
  const got = await api.objectStore.get(artifactKey(NAMESPACE, workspace, filename));
  if (got === undefined) return undefined;
  let text = '';
  for await (const chunk of got.body) text += String(chunk);
  return text;
}

/** Uploads through a signed upload URL, as a client with a large file does: the bytes bypass the API's routes. */
async function uploadThroughUrl(filename: string, bytes: string): Promise<void> {
  const issued = await call(api, `/v1/workspaces/${workspace}/artifacts/upload-url`, {
    key,
    method: 'POST',
    body: { files: [{ filename }] },
  });
  expect(issued.status).toBe(201);
  const { data } = (await issued.json()) as { data: { uploadUrl: string; contentType: string }[] };
  const url = data[0]?.uploadUrl;
  if (url === undefined) throw new Error('no upload URL');
  const put = await fetch(url, {
    method: 'PUT',
    headers: { 'content-type': data[0]?.contentType ?? 'application/octet-stream' },
    body: bytes,
  });
  expect(put.ok).toBe(true);
}

const download = (filename: string): Promise<Response> =>
  call(api, `/v1/workspaces/${workspace}/artifacts/${encodeURIComponent(filename)}`, { key });

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-artifact-sync-' });
  ({ api } = stack);
  key = await api.key({ org: 'acme' });
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: {
      executor: 'shell',
      prompt:
        'mkdir -p artifacts/reports\necho deliverable > artifacts/out.txt\necho nested > artifacts/reports/a.txt',
    },
  });
  expect(res.status).toBe(201);
  ({ id: taskId, workspaceId: workspace } = (await res.json()) as { id: string; workspaceId: string });
  expect((await streamOf(taskId)).done?.status).toBe('completed');
}, 120_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

describe('artifacts the agent writes', () => {
  it('are in object storage, nested ones too, as soon as the prompt has ended', async () => {
    // No waiting: the operator syncs before it records the prompt's end, and `done` follows that record.
    expect(await stored('out.txt')).toBe('deliverable\n');
    expect(await stored('reports/a.txt')).toBe('nested\n');
    const task = await api.store.get(TaskType, NAMESPACE, taskId);
    expect(task?.status?.prompts?.[0]).toMatchObject({
      archivedAt: expect.any(String),
      artifactsSyncedAt: expect.any(String),
    });
  });

  it('download through the artifacts API', async () => {
    const res = await download('reports/a.txt');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('nested\n');
  });

  it('disappear from object storage after the agent deletes them', async () => {
    await run('rm artifacts/out.txt');
    expect(await stored('out.txt')).toBeUndefined();
    expect(await stored('reports/a.txt')).toBe('nested\n');
  });
});

describe('artifacts uploaded through the API', () => {
  it('are in /code/artifacts before the next prompt runs', async () => {
    const form = new FormData();
    form.append('files', new Blob(['from the API\n']), 'uploaded.txt');
    const res = await fetch(`${api.url}/v1/workspaces/${workspace}/artifacts`, {
      method: 'POST',
      headers: { 'api-key': key },
      body: form,
    });
    expect(res.status).toBe(201);
    // A nested one, through an upload URL.
    await uploadThroughUrl('inputs/data.csv', 'a,b\n1,2\n');
    const stream = await run('cat artifacts/uploaded.txt artifacts/inputs/data.csv');
    expect(stream.done?.finalResult).toBe('from the API\na,b\n1,2');
  });

  it('vanish from /code/artifacts before the next prompt once deleted through the API', async () => {
    const res = await call(api, `/v1/workspaces/${workspace}/artifacts/uploaded.txt`, {
      key,
      method: 'DELETE',
    });
    expect(res.status).toBe(204);
    const stream = await run('test -e artifacts/uploaded.txt && echo present || echo absent');
    expect(stream.done?.finalResult).toBe('absent');
  });

  it('are replaced in the workspace when replaced through an upload URL, and the agent sees the new bytes', async () => {
    await uploadThroughUrl('inputs/data.csv', 'c,d\n');
    const stream = await run('cat artifacts/inputs/data.csv');
    expect(stream.done?.finalResult).toBe('c,d');
  });
});

describe('the sync itself', () => {
  it('has nothing left to do after a prompt ended: the base records what both sides agreed on', async () => {
    const ac = await api.store.get(AgentComputerType, NAMESPACE, workspace);
    const endpoint = ac?.status?.endpoint;
    if (ac === undefined || endpoint === undefined) throw new Error('the workspace has no endpoint');
    const runner = new RunnerClient({ endpoint, token: api.installationKey.runnerToken(ac) });
    const result = await syncArtifacts({
      runner,
      store: api.objectStore,
      namespace: NAMESPACE,
      workspace,
      logger: createLogger({ level: 'silent' }),
    });
    expect(result).toEqual({ actions: 0, failures: [] });
    const manifest = await runner.listArtifacts();
    expect(manifest.files.map((file) => file.path).sort()).toEqual(['inputs/data.csv', 'reports/a.txt']);
    expect(Object.keys(manifest.base).sort()).toEqual(['inputs/data.csv', 'reports/a.txt']);
  });

  it('keeps its base outside /code, where the agent cannot edit it', async () => {
    const listing = await run('find . -name "*base*" -not -path "./.git/*" | wc -l');
    expect(listing.done?.finalResult).toBe('0');
    const state = workspacePaths(stack.dir, NAMESPACE, workspace).state;
    const base = await readFile(join(state, 'artifacts', 'base.json'), 'utf8');
    expect(Object.keys(JSON.parse(base) as object)).toContain('reports/a.txt');
  });
});
