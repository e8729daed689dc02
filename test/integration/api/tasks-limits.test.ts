// The task API on a test server with an embedded store; the operator's part is played by the test.
// This file: the organization's limits on task creation, and creation as all or nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AgentComputerType } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  configureOrganization,
  createTask,
  errorOf,
  interceptingStore,
  namespaceOf,
  recordPrompts,
  startTasksApi,
  workspacesOf,
} from './tasks-support.js';

let api: TestApi;
beforeAll(async () => {
  ({ api } = await startTasksApi());
});
afterAll(() => api.stop());

describe('organization limits', () => {
  it('answers 400 limit_exceeded beyond concurrentTasks, and frees the slot once the operator records the end', async () => {
    const key = await api.key({ org: 'busy' });
    await configureOrganization(api, 'busy', (spec) => ({
      ...spec,
      limits: { ...spec.limits, concurrentTasks: 1 },
    }));
    const first = await createTask(api, key, { prompt: 'one' });
    const refused = await call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'two' } });
    expect(refused.status).toBe(400);
    expect((await errorOf(refused)).code).toBe('limit_exceeded');
    expect(await workspacesOf(api, 'busy')).toHaveLength(1);

    await recordPrompts(api, 'busy', first.id, (task) =>
      task.spec.prompts.map((p) => ({ id: p.id, status: 'succeeded' })),
    );
    await createTask(api, key, { prompt: 'three' });
  });

  it('counts the ephemeral workspace against agentComputers and points to workspaceId beyond it', async () => {
    const key = await api.key({ org: 'small' });
    await configureOrganization(api, 'small', (spec) => ({
      ...spec,
      limits: { ...spec.limits, agentComputers: 1 },
    }));
    const first = await createTask(api, key, { prompt: 'one' });
    const refused = await call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'two' } });
    expect(refused.status).toBe(400);
    const error = await errorOf(refused);
    expect(error.code).toBe('limit_exceeded');
    expect(error.message).toContain('workspaceId');
    // Reusing the workspace needs no new one.
    await createTask(api, key, { prompt: 'three', workspaceId: first.workspaceId });
    expect(await workspacesOf(api, 'small')).toHaveLength(1);
  });
});

describe('all or nothing', () => {
  it('deletes the ephemeral workspace when the Task cannot be created, and answers 500 without the cause', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-tasks-'));
    const inner = await EmbeddedStore.open(join(dir, 'store'));
    const store = interceptingStore(inner, {
      beforeCreate: (kind) =>
        kind === 'Task' ? Promise.reject(new Error('etcd is on fire')) : Promise.resolve(),
    });
    const failing = await startTestApi({ store });
    try {
      const key = await failing.key({ org: 'acme' });
      const res = await call(failing, '/v1/tasks', { key, method: 'POST', body: { prompt: 'x' } });
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain('etcd');
      expect((await inner.list(AgentComputerType, { namespace: namespaceOf('acme') })).items).toHaveLength(0);
    } finally {
      await failing.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
