// POST /v1/tasks against the real kube-apiserver: the Task and its ephemeral AgentComputer are
// created as custom resources with the right spec, and CRD validation accepts them. Dispatching the
// prompt to a runner cannot be exercised here: KWOK's fake nodes run no containers, so a pod's runner
// never answers (the embedded integration tests run real runners instead).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { TaskRecordSchema } from '../../api/task/present.js';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import { call, eventually, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { clusterStore } from './support.js';

const store = clusterStore();
const suffix = randomBytes(3).toString('hex');
const org = `tasks-${suffix}`;
const namespace = `agentry-org-${org}`;
let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi({ store, createNamespaces: true });
  key = await api.key({ org, user: 'ada' });
});
afterAll(async () => {
  await api.stop();
});

describe('the task API on a real kube-apiserver', () => {
  it('creates the Task and an ephemeral AgentComputer with the right spec', async () => {
    const res = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: {
        prompt: 'Fix the failing test\nand explain why',
        executor: 'shell',
        githubUrl: 'octo/hello',
        branchName: 'dev',
        visibility: 'private',
      },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; workspaceId: string; status: string };
    expect(created.status).toBe('running');

    const task = await store.get(TaskType, namespace, created.id);
    expect(task?.spec).toMatchObject({
      workspace: created.workspaceId,
      executor: 'shell',
      title: 'Fix the failing test',
      owner: 'ada',
      visibility: 'private',
      githubUrl: 'https://github.com/octo/hello',
      branch: 'dev',
    });
    expect(task?.spec.prompts).toHaveLength(1);
    expect(task?.spec.prompts[0]?.text).toBe('Fix the failing test\nand explain why');

    const workspace = await store.get(AgentComputerType, namespace, created.workspaceId);
    expect(workspace?.spec).toMatchObject({ ephemeral: true, owner: 'ada', operatingMode: 'Running' });
  });

  it('appends a follow-up prompt to the stored Task and serves it from the watch-fed cache', async () => {
    const res = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: { prompt: 'one', executor: 'shell' },
    });
    const { id } = (await res.json()) as { id: string };
    const followUp = await call(api, `/v1/tasks/${id}/prompts`, {
      key,
      method: 'POST',
      body: { prompt: 'two' },
    });
    expect(followUp.status).toBe(201);
    const stored = await store.get(TaskType, namespace, id);
    expect(stored?.spec.prompts.map((p) => p.text)).toEqual(['one', 'two']);
    await eventually(async () => {
      const got = await call(api, `/v1/tasks/${id}`, { key });
      return got.status === 200 && TaskRecordSchema.parse(await got.json()).prompts.length === 2;
    });
  });
});
