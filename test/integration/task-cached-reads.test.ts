// The task controller reads its Task, the Task's workspace and the organization's context lake from
// the operator's caches, the view whose watch events woke it: on Kubernetes each store read is a
// quorum read through etcd, and a dispatch used to wait on three of them. Its own status writes go
// into the cache, so the next pass does not work from the version before them; whether a task-made
// workspace may hibernate is asked of the cache's index of Tasks by workspace, not of a list of the
// namespace. Real embedded store, a real runner on loopback, the real task controller.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { updateWithRetry } from '../../api/optimistic-update.js';
import { AgentComputerType, ContextLakeType, TaskType } from '../../crds/index.js';
import type { AgentComputer, PromptSpec, Task } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import { addTaskController } from '../../operator/task/controller.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { readyStatus } from '../support/ready-status.js';
import { until } from '../support/until.js';
import { agentComputerObject, taskObject } from '../support/workspace-objects.js';
import { startRunner, stopStartedRunners } from './runner-tasks-support.js';

const NAMESPACE = 'agentry-org-acme';
const installationKey = new InstallationKey(randomBytes(32));

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager;
let registry: Registry;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-task-cached-reads-'));
});

afterAll(async () => {
  await stopStartedRunners();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  store = await EmbeddedStore.open(join(dir, randomUUID()));
  const logger = createLogger({ level: 'silent' });
  registry = new Registry();
  manager = new ControllerManager({ store, logger, registry });
  addTaskController(manager, {
    store,
    logger,
    registry,
    installationKey,
    executors: new ExecutorCatalog(),
    // A task-made workspace hibernates as soon as its tasks have nothing to run.
    ephemeralIdleGraceMs: 0,
  });
  await manager.start();
});

afterEach(async () => {
  await manager.stop();
  jest.restoreAllMocks();
  await store.close();
});

/** A running workspace whose runner answers on loopback, as the AgentComputer controller leaves it. */
async function readyWorkspace(name: string, ephemeral = false): Promise<AgentComputer> {
  const object = agentComputerObject(NAMESPACE, name);
  const created = await store.create(AgentComputerType, { ...object, spec: { ...object.spec, ephemeral } });
  const runner = await startRunner({ token: installationKey.runnerToken(created) });
  return store.replaceStatus(AgentComputerType, {
    ...created,
    status: readyStatus(created, runner.http.url),
  });
}

const prompt = (text: string): PromptSpec => ({
  id: randomUUID(),
  text,
  submittedAt: new Date().toISOString(),
});

/** A task on `workspace` whose one prompt runs `text` in bash (the `shell` executor). */
function taskOn(workspace: string, name: string, text: string): Task {
  const task = taskObject(NAMESPACE, name, workspace);
  return { ...task, spec: { ...task.spec, prompts: [prompt(text)] } };
}

const operatingModeOf = (workspace: string): string | undefined =>
  manager.caches.get(AgentComputerType, NAMESPACE, workspace)?.spec.operatingMode;

/** Waits until every prompt of the task has succeeded; answers the task as stored. */
async function succeeded(name: string, prompts: number): Promise<Task> {
  // Read from the cache: the first test counts the store's reads.
  return until(`task ${name}'s ${prompts} prompt(s) to succeed`, () => {
    const task = manager.caches.get(TaskType, NAMESPACE, name);
    const entries = task?.status?.prompts ?? [];
    return entries.length === prompts && entries.every((entry) => entry.status === 'succeeded')
      ? Promise.resolve(task)
      : Promise.resolve(undefined);
  });
}

describe('the task controller', () => {
  it('runs a task reading neither the task, nor its workspace, nor the lake from the store', async () => {
    await readyWorkspace('box');
    const gets = jest.spyOn(store, 'get');
    await store.create(TaskType, taskOn('box', 'cached', 'echo cached'));
    await succeeded('cached', 1);
    const read = gets.mock.calls.map(([type]) => type.kind);
    expect(read).not.toContain(TaskType.kind);
    expect(read).not.toContain(AgentComputerType.kind);
    expect(read).not.toContain(ContextLakeType.kind);
  });

  it('runs a prompt added while the first one runs, with no reconcile counted as failed', async () => {
    await readyWorkspace('busy');
    const created = await store.create(TaskType, taskOn('busy', 'follow-up', 'sleep 0.3; echo first'));
    await until('the first prompt to be dispatched', async () => {
      const task = await store.get(TaskType, NAMESPACE, 'follow-up');
      return task?.status?.prompts?.[0]?.dispatchedAt === undefined ? undefined : true;
    });
    // As POST /tasks/:id/prompts writes it: the spec, over the version read, again on Conflict.
    await updateWithRetry(store, TaskType, NAMESPACE, 'follow-up', (current) => ({
      ...current,
      spec: { ...current.spec, prompts: [...created.spec.prompts, prompt('echo second')] },
    }));
    await succeeded('follow-up', 2);
    const errors = await registry.getSingleMetric('agentry_reconcile_errors_total')?.get();
    expect(errors?.values.filter((value) => value.labels.controller === 'task') ?? []).toEqual([]);
  });

  it("hibernates an idle task-made workspace without listing the namespace's Tasks from the store", async () => {
    await readyWorkspace('made-for-a-task', true);
    const lists = jest.spyOn(store, 'list');
    await store.create(TaskType, taskOn('made-for-a-task', 'one-off', 'echo once'));
    await succeeded('one-off', 1);
    await until('the idle workspace to hibernate', () =>
      Promise.resolve(operatingModeOf('made-for-a-task') === 'Hibernated' ? true : undefined),
    );
    expect(lists.mock.calls.map(([type]) => type.kind)).not.toContain(TaskType.kind);
  });

  it('keeps a task-made workspace running while another task on it has a prompt to run', async () => {
    await readyWorkspace('shared', true);
    const secondSucceeded = (): boolean =>
      manager.caches.get(TaskType, NAMESPACE, 'second')?.status?.prompts?.[0]?.status === 'succeeded';
    // Whether the second task had ended, at each write that hibernates the workspace.
    const hibernatedWhenSecondEnded: boolean[] = [];
    const replace = store.replace.bind(store);
    jest.spyOn(store, 'replace').mockImplementation((type, object) => {
      if (type.kind === AgentComputerType.kind && object.metadata.name === 'shared') {
        const workspace = AgentComputerType.schema.parse(object);
        if (workspace.spec.operatingMode === 'Hibernated') hibernatedWhenSecondEnded.push(secondSucceeded());
      }
      return replace(type, object);
    });
    await store.create(TaskType, taskOn('shared', 'first', 'sleep 0.5; echo first'));
    await until('the first prompt to be dispatched', () => {
      const task = manager.caches.get(TaskType, NAMESPACE, 'first');
      return Promise.resolve(task?.status?.prompts?.[0]?.dispatchedAt === undefined ? undefined : true);
    });
    // Queued in the runner behind the first: pending when the first ends and its task goes idle.
    await store.create(TaskType, taskOn('shared', 'second', 'sleep 1; echo second'));
    await succeeded('first', 1);
    await succeeded('second', 1);
    await until('the workspace to hibernate once the second task is idle', () =>
      Promise.resolve(operatingModeOf('shared') === 'Hibernated' ? true : undefined),
    );
    expect(hibernatedWhenSecondEnded).toEqual([true]);
  });
});
