// Two operators in one process, each with a connection of its own to a real kube-apiserver,
// campaigning on one coordination.k8s.io Lease: only the leader reconciles, and when it crashes
// (its lease not released) the other takes over once the lease expires.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerType } from '../../crds/index.js';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import {
  TestVolumes,
  createAgentComputer,
  deleteAgentComputers,
  deleteNamespace,
  startTestOperator,
} from './operator-support.js';
import type { TestOperator } from './operator-support.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';

const READY_MS = 120_000;
/** Generous: the lease lasts 3 s; a loaded 2-core machine may add a few seconds more. */
const TAKEOVER_BOUND_MS = 20_000;
const store = clusterStore();
const volumes = new TestVolumes(store);
let namespace: string;
const operators: TestOperator[] = [];

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'op-leader');
  const scope = { namespaces: new Set([namespace]), organizations: new Set<string>() };
  const leaderElection = {
    namespace,
    name: 'agentry-operator',
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
  };
  for (let i = 0; i < 2; i += 1) {
    operators.push(await startTestOperator({ runtime: 'pod', scope, leaderElection }));
  }
  await eventually('a leader', async () =>
    Promise.resolve(operators.some((o) => o.operator.manager.isLeader) ? true : undefined),
  );
}, 60_000);

afterAll(async () => {
  try {
    await deleteAgentComputers(store, namespace);
  } finally {
    for (const o of operators) await o.stop();
    await deleteNamespace(store, namespace);
    await volumes.deleteAll();
    await store.close();
  }
}, 180_000);

const leaders = (): TestOperator[] => operators.filter((o) => o.operator.manager.isLeader);

function theLeader(): TestOperator {
  const [leader, ...others] = leaders();
  if (leader === undefined || others.length > 0) throw new Error(`${leaders().length} leaders`);
  return leader;
}

/** Creates agent computers through the store, each with the volume its disk will claim. */
async function agentComputers(prefix: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    await volumes.forDisk(namespace, name);
    await createAgentComputer(store, namespace, { name });
  }
  return names;
}

async function untilReady(names: string[]): Promise<void> {
  await eventually(
    `${names.join(', ')} ready`,
    async () => {
      const { items } = await store.list(AgentComputerType, { namespace });
      const ready = items.filter(
        (ac) => names.includes(ac.metadata.name) && agentComputerStatus(ac) === 'ready',
      );
      return ready.length === names.length ? true : undefined;
    },
    READY_MS,
  );
}

/** Pod names by agent computer. */
async function podsByAgentComputer(names: string[]): Promise<Record<string, string[]>> {
  const { items } = await store.list(PodType, { namespace });
  return Object.fromEntries(
    names.map((name) => [
      name,
      items
        .filter((pod) => pod.metadata.labels?.['agentry.dev/agent-computer'] === name)
        .map((pod) => pod.metadata.name),
    ]),
  );
}

const podCounts = async (names: string[]): Promise<number[]> =>
  Object.values(await podsByAgentComputer(names)).map((pods) => pods.length);

describe('two operators campaigning on one lease', () => {
  let first: string[];

  beforeAll(async () => {
    first = await agentComputers('first', 3);
    await untilReady(first);
  }, READY_MS + 30_000);

  it('elect exactly one leader', () => {
    expect(leaders()).toHaveLength(1);
  });

  it('converge agent computers with exactly one pod each', async () => {
    expect(await podCounts(first)).toEqual([1, 1, 1]);
  });

  it('leave the work to the leader: the follower writes nothing', () => {
    const follower = operators.find((o) => !o.operator.manager.isLeader);
    expect(follower?.store.writes).toEqual([]);
    expect(theLeader().store.writes.length).toBeGreaterThan(0);
  });

  describe('when the leader crashes without releasing its lease', () => {
    let takeoverMs: number;
    let crashed: TestOperator;
    let successor: TestOperator | undefined;
    let second: string[];
    let firstPods: Record<string, string[]>;

    beforeAll(async () => {
      firstPods = await podsByAgentComputer(first);
      crashed = theLeader();
      await crashed.kill();
      const killedAt = Date.now();
      successor = await eventually(
        'a new leader',
        () => Promise.resolve(operators.find((o) => o !== crashed && o.operator.manager.isLeader)),
        60_000,
      );
      takeoverMs = Date.now() - killedAt;
      second = await agentComputers('second', 3);
      await untilReady(second);
    }, READY_MS + 90_000);

    it('the follower takes over once the lease expires', () => {
      expect(successor).toBeDefined();
      expect(takeoverMs).toBeLessThan(TAKEOVER_BOUND_MS);
    });

    it('the crashed operator has stopped and says it was killed', async () => {
      await expect(crashed.operator.done).resolves.toBe('killed');
    });

    it('the new leader converges new agent computers with exactly one pod each', async () => {
      expect(await podCounts(second)).toEqual([1, 1, 1]);
    });

    it('the earlier agent computers keep the one pod each they had', async () => {
      expect(await podsByAgentComputer(first)).toEqual(firstPods);
      expect(Object.values(firstPods).map((pods) => pods.length)).toEqual([1, 1, 1]);
    });

    it('the new leader did the work for the new agent computers', () => {
      const made = successor?.store.writes.filter((w) => w.startsWith('create Pod ')) ?? [];
      expect(made.map((w) => w.split('/')[1]?.replace(/-runner-.*$/, '')).sort()).toEqual(second);
    });
  });
});
