// Before a prompt, the operator pushes the store's side of a workspace's artifacts into it only when
// the API server changed that side since the last sync (operator/task/artifacts/store-changes.ts):
// otherwise every prompt would wait on an object-storage listing and a runner round trip. To see
// whether a sync ran before a prompt, the tests put an object into storage behind the API's back
// (nothing marks that): it is in the workspace before the prompt only if a sync ran. End to end on
// the embedded default: API server, operator, real runner processes running `shell` prompts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { AgentComputerType } from '../../crds/index.js';
import { artifactKey } from '../../platform/objectstore/keys.js';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';
import { agentComputerObject } from '../support/workspace-objects.js';

const NAMESPACE = 'agentry-org-acme';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-sync-before-prompt-' });
  ({ api } = stack);
  key = await api.key({ org: 'acme' });
}, 120_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

/** Runs a prompt (on `workspaceId`, or a new workspace) and answers its result and workspace. */
async function prompt(script: string, workspaceId?: string): Promise<{ result: string; workspace: string }> {
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: script, ...(workspaceId === undefined ? {} : { workspaceId }) },
  });
  expect(res.status).toBe(201);
  const { id, workspaceId: workspace } = (await res.json()) as { id: string; workspaceId: string };
  const stream = await readTaskStream(`${api.url}/v1/tasks/${id}/events`, { key, timeoutMs: 90_000 });
  expect(stream.done?.status).toBe('completed');
  return { result: stream.done?.finalResult ?? '', workspace };
}

/** An object in the workspace's artifact storage that no API route wrote (so nothing marked it). */
const putBehindTheApi = (workspace: string, path: string): Promise<unknown> =>
  api.objectStore.put(artifactKey(NAMESPACE, workspace, path), Buffer.from(`${path}\n`));

const seen = (path: string): string => `test -e artifacts/${path} && echo seen || echo unseen`;

describe('before a prompt', () => {
  it('does not sync a workspace whose artifacts nobody changed through the API', async () => {
    const { workspace } = await prompt('true');
    await putBehindTheApi(workspace, 'behind.txt');
    expect((await prompt(seen('behind.txt'), workspace)).result).toBe('unseen');
    // The sync after that prompt brought it: the store's side is never lost, only not waited for.
    expect((await prompt(seen('behind.txt'), workspace)).result).toBe('seen');
  });

  it('syncs once after an upload through the API, then not again until the next change', async () => {
    const { workspace } = await prompt('true');
    const form = new FormData();
    form.append('files', new Blob(['uploaded\n']), 'uploaded.txt');
    const uploaded = await fetch(`${api.url}/v1/workspaces/${workspace}/artifacts`, {
      method: 'POST',
      headers: { 'api-key': key },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    await putBehindTheApi(workspace, 'first.txt');
    expect((await prompt(`${seen('uploaded.txt')}; ${seen('first.txt')}`, workspace)).result).toBe(
      'seen\nseen',
    );
    await putBehindTheApi(workspace, 'second.txt');
    expect((await prompt(seen('second.txt'), workspace)).result).toBe('unseen');
  });

  it('syncs before the first prompt of a workspace Agentry did not make (no mark: not known to be unchanged)', async () => {
    const name = randomUUID();
    await api.store.create(AgentComputerType, agentComputerObject(NAMESPACE, name));
    await putBehindTheApi(name, 'before.txt');
    expect((await prompt(seen('before.txt'), name)).result).toBe('seen');
    await putBehindTheApi(name, 'after.txt');
    expect((await prompt(seen('after.txt'), name)).result).toBe('unseen');
  });
});
