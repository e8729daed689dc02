import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AgentComputerType, TaskType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer, Task } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import { clusterStore, createTestNamespace, kubectl } from './support.js';

const store = clusterStore();
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'crd');
});
afterAll(async () => {
  await store.close();
});

const agentComputer = (name: string, spec: Record<string, unknown>): AgentComputer =>
  // Deliberately unchecked: these objects are meant to break the schema the API server enforces.
  ({
    apiVersion: apiVersionOf(AgentComputerType),
    kind: 'AgentComputer',
    metadata: { name, namespace },
    spec,
  }) as AgentComputer;

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (isStoreError(err, 'Invalid')) return err.message;
    throw err;
  }
  throw new Error('the API server accepted an invalid object');
}

describe('the generated CRDs are live on the API server', () => {
  it('rejects an operatingMode outside the enum with the schema message', async () => {
    const message = await rejection(
      store.create(AgentComputerType, agentComputer('bad-mode', { operatingMode: 'Sleeping' })),
    );
    expect(message).toMatch(/spec\.operatingMode/);
    expect(message).toMatch(/Unsupported value: "Sleeping"/);
  });

  it('rejects a display name over 200 characters', async () => {
    const message = await rejection(
      store.create(AgentComputerType, agentComputer('long-name', { displayName: 'x'.repeat(201) })),
    );
    expect(message).toMatch(/spec\.displayName/);
  });

  it('rejects an idleTimeout that is not a duration', async () => {
    const message = await rejection(
      store.create(AgentComputerType, agentComputer('bad-idle', { idleTimeout: 'soon' })),
    );
    expect(message).toMatch(/spec\.idleTimeout/);
  });

  it('rejects a Task without prompts', async () => {
    const task = {
      apiVersion: apiVersionOf(TaskType),
      kind: 'Task',
      metadata: { name: 'no-prompts', namespace },
      spec: { workspace: 'w', executor: 'claude', title: 't', owner: 'u', visibility: 'shared', prompts: [] },
    } satisfies Task;
    const message = await rejection(store.create(TaskType, task));
    expect(message).toMatch(/spec\.prompts/);
  });

  it('applies the schema defaults a GitOps user leaves out', async () => {
    const created = await store.create(AgentComputerType, agentComputer('defaults', {}));
    expect(created.spec).toMatchObject({
      displayName: 'Agent Computer',
      operatingMode: 'Running',
      idleTimeout: '15m',
      ephemeral: false,
    });
  });

  it('lists Agentry kinds under the agentry category, with printer columns', async () => {
    const out = await kubectl(['get', 'agentry', '-n', namespace]);
    expect(out).toMatch(/agentcomputer\.agentry\.dev\/defaults/);
    const wide = await kubectl(['get', 'agentcomputers', '-n', namespace]);
    expect(wide.split('\n')[0]).toMatch(/DISPLAY NAME\s+RUNTIME\s+MODE\s+READY\s+AGE/);
  });
});
