// Regression: every AgentComputer reconcile listed all Tasks of its namespace from the store
// (quadratic over many workspaces: 1,000 workspaces + 1,000 tasks took a minute a pass). It now
// looks its Tasks up in the Task cache's index by workspace.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import type { Runtime } from '../../crds/index.js';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { readyRuntime } from '../support/ready-runtime.js';
import { until } from '../support/until.js';
import { agentComputerObject, taskObject } from '../support/workspace-objects.js';

const WORKSPACES = 20;
const NAMESPACE = 'agentry-org-acme';

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-ac-task-reads-'));
  store = await EmbeddedStore.open(dir);
  const logger = createLogger({ level: 'silent' });
  manager = new ControllerManager({ store, logger, registry: new Registry() });
  addAgentComputerController(manager, {
    store,
    logger,
    registry: new Registry(),
    runtimes: new Map<Runtime, WorkloadRuntime>([['process', readyRuntime]]),
    defaultRuntime: 'process',
    installationKey: new InstallationKey(randomBytes(32)),
  });
});

afterEach(async () => {
  await manager.stop();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const names = Array.from({ length: WORKSPACES }, (_, i) => `box-${i}`);

async function createWorkspaceWithTask(name: string, idleTimeout = '15m'): Promise<void> {
  await store.create(AgentComputerType, agentComputerObject(NAMESPACE, name, idleTimeout));
  await store.create(TaskType, taskObject(NAMESPACE, `task-on-${name}`, name));
}

const readAgentComputer = async (name: string) => {
  const ac = await store.get(AgentComputerType, NAMESPACE, name);
  if (ac === undefined) throw new Error(`${name} is gone`);
  return ac;
};

describe('reconciling many agent computers', () => {
  it('lists no Tasks from the store: each looks its own up in the cache', async () => {
    await manager.start();
    const lists = jest.spyOn(store, 'list');
    for (const name of names) await createWorkspaceWithTask(name);
    await until('every agent computer to be ready', async () => {
      const { items } = await store.list(AgentComputerType, { namespace: NAMESPACE });
      const ready = items.filter((ac) => agentComputerStatus(ac) === 'ready');
      return ready.length === WORKSPACES ? true : undefined;
    });
    const taskLists = lists.mock.calls.filter(([type]) => type === TaskType);
    expect(taskLists).toHaveLength(0);
  });

  it('keeps a workspace with a waiting prompt awake, and idles it once that Task is deleted', async () => {
    await manager.start();
    await createWorkspaceWithTask('busy', '1s');
    await until('the workspace to be ready', async () =>
      agentComputerStatus(await readAgentComputer('busy')) === 'ready' ? true : undefined,
    );
    await sleep(2_000); // past its idle timeout: only its Task's waiting prompt keeps it running
    expect((await readAgentComputer('busy')).spec.operatingMode).toBe('Running');
    await store.delete(TaskType, NAMESPACE, 'task-on-busy');
    await until('the workspace to hibernate', async () =>
      (await readAgentComputer('busy')).spec.operatingMode === 'Hibernated' ? true : undefined,
    );
  });
});
