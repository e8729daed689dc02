// A claim rewrites a pool member's labels, annotations, owner references and some spec fields
// (docs/adr/0008-warm-pools.md). None of them may reach the workload: the pod and kubevirt runtimes
// must write nothing for a claimed member, and the AgentComputer reconciler must keep it Ready.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AgentComputerSpecSchema, AgentComputerType, SecretType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer, KubeObject, ResourceType, Runtime } from '../../crds/index.js';
import { isTrueForGeneration } from '../../crds/conditions.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime } from '../../operator/runtimes/kubevirt.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { poolMember } from '../../operator/workspace-pool/member.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { podControllerHarness } from '../support/pod-controller-harness.js';
import { claimMember, createPool } from '../support/pool-members.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
const ContainerEnvSchema = z.array(z.object({ name: z.string(), value: z.string().optional() }));
const WORKLOAD_TYPES: ResourceType[] = [
  PodType,
  ServiceType,
  NetworkPolicyType,
  PersistentVolumeClaimType,
  SecretType,
  VirtualMachineType,
];

/** Every workload object of the namespace as `kind/name → uid@resourceVersion`: any write changes it. */
async function workloadObjects(store: EmbeddedStore): Promise<Record<string, string>> {
  const entries: [string, string][] = [];
  for (const type of WORKLOAD_TYPES) {
    const { items } = await store.list<KubeObject>(type, { namespace: NAMESPACE });
    for (const object of items) {
      const { name, uid, resourceVersion } = object.metadata;
      entries.push([`${type.kind}/${name}`, `${uid ?? ''}@${resourceVersion ?? ''}`]);
    }
  }
  return Object.fromEntries(entries);
}

/** A member of a stored pool (its owner must exist, or the store collects the member at once). */
async function storedMember(store: EmbeddedStore, runtime: Runtime): Promise<AgentComputer> {
  const pool = await createPool(store, NAMESPACE, {
    name: 'warm',
    spec: { template: { runtime, idleTimeout: '30m' } },
  });
  return store.create(AgentComputerType, poolMember(pool, 'bxk2p'));
}

describe('the cluster runtimes, given a claimed member', () => {
  let dir: string;
  let store: EmbeddedStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentry-pool-claim-'));
    store = await EmbeddedStore.open(dir);
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const runtimes: [Runtime, (store: EmbeddedStore) => WorkloadRuntime][] = [
    ['pod', (s) => new PodRuntime(clusterOptions(s))],
    ['kubevirt', (s) => new KubevirtRuntime(clusterOptions(s))],
  ];
  it.each(runtimes)(
    '%s: write nothing to its workload (same Pod or VM, same objects)',
    async (name, make) => {
      const runtime = make(store);
      const member = await storedMember(store, name);
      const context = { tokenSecretName: `${member.metadata.name}-runner-token`, token: 'tok' };
      const signal = new AbortController().signal;
      await runtime.apply(member, context, signal);
      await runtime.apply(member, context, signal); // settled: a second pass writes nothing either
      const before = await workloadObjects(store);
      expect(
        Object.keys(before).some((key) => key.startsWith(name === 'pod' ? 'Pod/' : 'VirtualMachine/')),
      ).toBe(true);
      const claimed = await claimMember(store, member, {
        displayName: 'mine',
        ephemeral: true,
      });
      await runtime.apply(claimed, context, signal);
      expect(await workloadObjects(store)).toEqual(before);
    },
  );
});

describe('the pod runtime, given a member and a workspace made without a pool', () => {
  it("tells only the member's runner to warm up (AGENTRY_RUNNER_WARM_UP=true)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-pool-warm-env-'));
    const store = await EmbeddedStore.open(dir);
    try {
      const runtime = new PodRuntime(clusterOptions(store));
      const member = await storedMember(store, 'pod');
      const plain = await store.create(AgentComputerType, {
        apiVersion: apiVersionOf(AgentComputerType),
        kind: AgentComputerType.kind,
        metadata: { name: 'plain', namespace: NAMESPACE },
        spec: AgentComputerSpecSchema.parse({ runtime: 'pod' }),
      });
      const signal = new AbortController().signal;
      for (const ac of [member, plain])
        await runtime.apply(
          ac,
          { tokenSecretName: `${ac.metadata.name}-runner-token`, token: 'tok' },
          signal,
        );
      const warmUpOf = async (ac: AgentComputer): Promise<string | undefined> => {
        const { items } = await store.list(PodType, { namespace: NAMESPACE });
        const pod = items.find((p) => p.metadata.name.startsWith(`${ac.metadata.name}-`));
        if (pod === undefined) throw new Error(`no pod for ${ac.metadata.name}`);
        const env = pod.spec.containers.flatMap((c) => ContainerEnvSchema.parse(c.env ?? []));
        return env.find((e) => e.name === 'AGENTRY_RUNNER_WARM_UP')?.value;
      };
      expect(await warmUpOf(member)).toBe('true');
      expect(await warmUpOf(plain)).toBeUndefined();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const clusterOptions = (store: EmbeddedStore) => ({
  store,
  controlNamespace: 'agentry-system',
  defaultImage: 'registry.invalid/agentry:test',
  defaults: { cpu: '1', memory: '1Gi', disk: '5Gi' },
  logger: createLogger({ level: 'silent' }),
});

describe('the AgentComputer controller, given a claimed pod member', () => {
  it('keeps its Pod and its Ready condition through the claim', async () => {
    const harness = await podControllerHarness(
      `agentry-pool-claim-ac-${randomBytes(3).toString('hex')}-`,
      (s) => s,
    );
    try {
      addAgentComputerController(harness.manager, harness.deps);
      await harness.manager.start();
      const store = harness.inner;
      const member = await storedMember(store, 'pod');
      const pod = await until(
        'the member pod',
        async () => (await store.list(PodType, { namespace: NAMESPACE })).items[0],
      );
      await store.replaceStatus(PodType, {
        ...pod,
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      } satisfies Pod);
      const ready = await until('the member to be ready', async () => {
        const ac = await store.get(AgentComputerType, NAMESPACE, member.metadata.name);
        return ac !== undefined && isTrueForGeneration(ac, 'Ready') ? ac : undefined;
      });
      const readyStates: string[] = [];
      const watching = new AbortController();
      const watch = await store.watch(
        AgentComputerType,
        {
          namespace: NAMESPACE,
          resourceVersion: ready.metadata.resourceVersion ?? '0',
          signal: watching.signal,
        },
        (event) => {
          if (event.type === 'BOOKMARK') return;
          const condition = event.object.status?.conditions?.find((c) => c.type === 'Ready');
          readyStates.push(condition?.status ?? 'none');
        },
      );
      const claimed = await claimMember(store, ready, { displayName: 'mine' });
      const converged = await until('the claim reconciled', async () => {
        const ac = await store.get(AgentComputerType, NAMESPACE, member.metadata.name);
        return ac !== undefined && (ac.status?.observedGeneration ?? 0) >= (claimed.metadata.generation ?? 0)
          ? ac
          : undefined;
      });
      watching.abort();
      await watch.done;
      expect(isTrueForGeneration(converged, 'Ready')).toBe(true);
      expect(readyStates.length).toBeGreaterThan(0);
      expect(readyStates.every((status) => status === 'True')).toBe(true);
      const pods = (await store.list(PodType, { namespace: NAMESPACE })).items;
      expect(pods.map((p) => `${p.metadata.uid ?? ''}:${p.metadata.deletionTimestamp ?? 'live'}`)).toEqual([
        `${pod.metadata.uid ?? ''}:live`,
      ]);
    } finally {
      await harness.close();
    }
  });
});
