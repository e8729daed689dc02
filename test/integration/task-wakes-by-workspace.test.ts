// Regression: every AgentComputer event made the task controller scan all cached Tasks of the
// namespace for those on that workspace (quadratic over many workspaces). It looks them up in the
// Task cache's index by workspace now.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import { addTaskController } from '../../operator/task/controller.js';
import { TaskReconciler } from '../../operator/task/reconciler.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { until } from '../support/until.js';
import { agentComputerObject, taskObject } from '../support/workspace-objects.js';

const NAMESPACE = 'agentry-org-acme';

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-task-wakes-'));
  store = await EmbeddedStore.open(dir);
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  manager = new ControllerManager({ store, logger, registry });
  addTaskController(manager, {
    store,
    logger,
    registry,
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
  });
});

afterEach(async () => {
  await manager.stop();
  jest.restoreAllMocks();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe("an agent computer's change", () => {
  it('wakes the Tasks on it, found without scanning the Task cache', async () => {
    const tasks = { 'a-1': 'a', 'a-2': 'a', 'b-1': 'b' };
    for (const [name, workspace] of Object.entries(tasks))
      await store.create(TaskType, taskObject(NAMESPACE, name, workspace));
    await manager.start();
    const reconciles = jest.spyOn(TaskReconciler.prototype, 'reconcile');
    const lists = jest.spyOn(manager.caches, 'list');
    await store.create(AgentComputerType, agentComputerObject(NAMESPACE, 'a'));
    await until('both Tasks on the workspace to be reconciled', () => {
      const woken = new Set(reconciles.mock.calls.map(([request]) => request.name));
      return Promise.resolve(woken.has('a-1') && woken.has('a-2') ? true : undefined);
    });
    expect(lists.mock.calls.map(([type]) => type.kind)).not.toContain(TaskType.kind);
  });
});
