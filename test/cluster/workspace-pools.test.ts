// Warm pools on a real kube-apiserver: the operator in-process with the pod runtime (KWOK nodes run
// the pods) or the kubevirt runtime (KWOK stages play virt-controller); kube-controller-manager
// collects what a deleted pool owned.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AgentComputerType, POOL_LABEL, WorkspacePoolType } from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { isTrueForGeneration } from '../../crds/conditions.js';
import { VirtualMachineType } from '../../operator/runtimes/kube-objects.js';
import { createPool } from '../support/pool-members.js';
import { TestVolumes, deleteAgentComputers, deleteNamespace, startTestOperator } from './operator-support.js';
import type { TestOperator } from './operator-support.js';
import { clusterStore, createTestNamespace, eventually, kubectl } from './support.js';

const READY_MS = 120_000;
const store = clusterStore();
const volumes = new TestVolumes(store);

afterAll(async () => {
  await volumes.deleteAll();
  await store.close();
});

const membersOf = async (namespace: string): Promise<AgentComputer[]> =>
  (await store.list(AgentComputerType, { namespace, labelSelector: `${POOL_LABEL}=warm` })).items;

/** Waits for the pool to report `ready` Ready members; `onMember` sees each member once (to give it a volume). */
async function untilFilled(
  namespace: string,
  ready: number,
  onMember: (name: string) => Promise<void> = () => Promise.resolve(),
): Promise<WorkspacePool> {
  const seen = new Set<string>();
  return eventually(
    `pool warm with ${String(ready)} ready members`,
    async () => {
      for (const member of await membersOf(namespace)) {
        if (seen.has(member.metadata.name)) continue;
        seen.add(member.metadata.name);
        await onMember(member.metadata.name);
      }
      const pool = await store.get(WorkspacePoolType, namespace, 'warm');
      return pool?.status?.ready === ready && pool.status.provisioning === 0 ? pool : undefined;
    },
    READY_MS,
  );
}

/** One operator of `runtime` seeing only a namespace of its own, with a pool `warm` in it. */
function poolOnRuntime(runtime: 'pod' | 'kubevirt'): { namespace: () => string } {
  let namespace = '';
  let operator: TestOperator;
  beforeAll(async () => {
    namespace = await createTestNamespace(store, `pool-${runtime}`);
    operator = await startTestOperator({
      runtime,
      scope: { namespaces: new Set([namespace]), organizations: new Set() },
    });
  }, 60_000);
  afterAll(async () => {
    try {
      await store.delete(WorkspacePoolType, namespace, 'warm').catch(() => undefined);
      await deleteAgentComputers(store, namespace);
    } finally {
      await operator.stop();
      await deleteNamespace(store, namespace);
    }
  }, 180_000);
  return { namespace: () => namespace };
}

describe('a pod-runtime pool', () => {
  const { namespace } = poolOnRuntime('pod');

  it('fills with Ready members on KWOK nodes, shown by kubectl get workspacepools', async () => {
    await createPool(store, namespace(), { name: 'warm', spec: { minReady: 2 } });
    await untilFilled(namespace(), 2, (member) => volumes.forDisk(namespace(), member));
    const members = await membersOf(namespace());
    expect(members.every((ac) => isTrueForGeneration(ac, 'Ready'))).toBe(true);
    const table = await kubectl(['-n', namespace(), 'get', 'workspacepools']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+MIN\s+DESIRED\s+READY\s+PROVISIONING\s+CLAIMED\s+AGE/);
    expect(table.split('\n')[1]).toMatch(/^warm\s+2\s+2\s+2\s+0\s+0\s+/);
  }, 180_000);
});

describe('a kubevirt pool', () => {
  const { namespace } = poolOnRuntime('kubevirt');

  it('fills with Ready members whose VirtualMachines KWOK runs', async () => {
    await createPool(store, namespace(), {
      name: 'warm',
      spec: { minReady: 2, template: { runtime: 'kubevirt' } },
    });
    await untilFilled(namespace(), 2);
    const vms = (await store.list(VirtualMachineType, { namespace: namespace() })).items;
    expect(vms.map((vm) => vm.metadata.name).sort()).toEqual(
      (await membersOf(namespace())).map((ac) => ac.metadata.name).sort(),
    );
  }, 180_000);
});
