// An operator crashing mid-provisioning and a new one taking its place, on a real kube-apiserver:
// the work is level-based, so the new operator finishes what the first began, making no workload
// twice.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerType } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { PersistentVolumeClaimType, PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import {
  TestVolumes,
  createAgentComputer,
  deleteAgentComputers,
  deleteNamespace,
  startTestOperator,
} from './operator-support.js';
import type { OperatorScope, TestOperator } from './operator-support.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';

const COUNT = 50;
/** Minutes, not seconds: fifty pods on a 2-core machine shared with other tests. */
const CONVERGE_MS = 420_000;
const store = clusterStore();
const volumes = new TestVolumes(store);
const names = Array.from({ length: COUNT }, (_, i) => `ws-${String(i).padStart(2, '0')}`);
let namespace: string;
let scope: OperatorScope;
let first: TestOperator | undefined;
let second: TestOperator | undefined;
/** When the first operator was killed: pods it had made, agent computers ready. */
let atKill: { pods: number; ready: number };
let converged: AgentComputer[];
let pods: Pod[];

const listAgentComputers = async (): Promise<AgentComputer[]> =>
  (await store.list(AgentComputerType, { namespace })).items;
const readyCount = async (): Promise<number> =>
  (await listAgentComputers()).filter((ac) => agentComputerStatus(ac) === 'ready').length;
const listPods = async (): Promise<Pod[]> => (await store.list(PodType, { namespace })).items;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'op-restart');
  scope = { namespaces: new Set([namespace]), organizations: new Set<string>() };
  for (const name of names) await volumes.forDisk(namespace, name);
  first = await startTestOperator({ runtime: 'pod', scope });
  await Promise.all(names.map((name) => createAgentComputer(store, namespace, { name })));
  // Mid-provisioning: some pods made, not every workspace ready.
  await eventually(
    'the first pods',
    async () => ((await listPods()).length >= 5 ? true : undefined),
    120_000,
  );
  await first.kill();
  atKill = { pods: (await listPods()).length, ready: await readyCount() };
  second = await startTestOperator({ runtime: 'pod', scope });
  converged = await eventually(
    `${COUNT} agent computers ready`,
    async () => {
      const items = await listAgentComputers();
      const ready = items.filter((ac) => agentComputerStatus(ac) === 'ready');
      return ready.length === COUNT ? items : undefined;
    },
    CONVERGE_MS,
  );
  pods = await listPods();
}, CONVERGE_MS + 180_000);

afterAll(async () => {
  try {
    await deleteAgentComputers(store, namespace, 300_000);
  } finally {
    await first?.stop();
    await second?.stop();
    await deleteNamespace(store, namespace);
    await volumes.deleteAll();
    await store.close();
  }
}, 420_000);

const podsOf = (name: string): Pod[] =>
  pods.filter((pod) => pod.metadata.labels?.['agentry.dev/agent-computer'] === name);

describe(`an operator killed while provisioning ${COUNT} agent computers, and its replacement`, () => {
  it('was killed mid-provisioning, with work left to do', () => {
    expect(atKill.pods).toBeGreaterThanOrEqual(5);
    expect(atKill.ready).toBeLessThan(COUNT);
  });

  it('the killed operator stopped, saying it was killed', async () => {
    await expect(first?.operator.done).resolves.toBe('killed');
  });

  it(`the replacement brings all ${COUNT} to ready`, () => {
    expect(converged.map((ac) => agentComputerStatus(ac))).toEqual(names.map(() => 'ready'));
  });

  it('every agent computer has exactly one pod, no duplicates', () => {
    expect(names.map((name) => podsOf(name).length)).toEqual(names.map(() => 1));
    expect(pods).toHaveLength(COUNT);
  });

  it("each one's sandbox is its one pod", () => {
    for (const ac of converged) {
      expect(ac.status?.sandboxId).toBe(podsOf(ac.metadata.name)[0]?.metadata.name);
    }
  });

  it('each one has exactly one disk', async () => {
    const { items } = await store.list(PersistentVolumeClaimType, { namespace });
    expect(items.map((pvc) => pvc.metadata.name).sort()).toEqual(names.map((name) => `${name}-disk`));
  });
});
