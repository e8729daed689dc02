// The workload finalizer of an AgentComputer is written beside the pod runtime's objects, not
// before them (one round trip less on the first reconcile). These pin why that is safe: a deletion
// that wins the race against the finalizer leaves no Pod made and nothing behind, and the process
// runtime, whose process no owner reference collects, still gets its finalizer before anything runs.
import { afterEach, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import { AgentComputerSpecSchema, AgentComputerType, SecretType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer, KubeObject, ResourceType, Runtime } from '../../crds/index.js';
import { WORKLOAD_FINALIZER } from '../../operator/agent-computer/reconciler.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
} from '../../operator/runtimes/kube-objects.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import type { EmbeddedStore } from '../../platform/store/embedded.js';
import { podControllerHarness } from '../support/pod-controller-harness.js';
import type { PodControllerHarness } from '../support/pod-controller-harness.js';
import { readyRuntime } from '../support/ready-runtime.js';
import { RecordingStore } from '../support/recording-store.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
const NAME = 'raced';

/** Deletes the AgentComputer just before its finalizer write reaches the store: the user's delete came first. */
class DeleteBeforeFinalizerStore extends RecordingStore {
  deleted = false;

  constructor(private readonly embedded: EmbeddedStore) {
    super(embedded);
  }

  override async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    const addsFinalizer = object.metadata.finalizers?.includes(WORKLOAD_FINALIZER) === true;
    if (type.kind === AgentComputerType.kind && addsFinalizer && !this.deleted) {
      this.deleted = true;
      await this.embedded.delete(AgentComputerType, object.metadata.namespace, object.metadata.name);
    }
    return super.replace(type, object);
  }
}

/**
 * Removes the workload finalizer itself just before the reconciler's own removal reaches the store,
 * as an earlier pass (on a stale read) would have: the reconciler's write then finds the object gone.
 */
class FinalizedMeanwhileStore extends RecordingStore {
  finalizedMeanwhile = false;

  constructor(private readonly embedded: EmbeddedStore) {
    super(embedded);
  }

  override async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    const removesFinalizer =
      object.metadata.deletionTimestamp !== undefined &&
      object.metadata.finalizers?.includes(WORKLOAD_FINALIZER) !== true;
    if (type.kind === AgentComputerType.kind && removesFinalizer && !this.finalizedMeanwhile) {
      this.finalizedMeanwhile = true;
      const { namespace, name } = object.metadata;
      const current = await this.embedded.get(AgentComputerType, namespace ?? '', name);
      if (current !== undefined)
        await this.embedded.replace(AgentComputerType, {
          ...current,
          metadata: { ...current.metadata, finalizers: [] },
        });
    }
    return super.replace(type, object);
  }
}

/** The manager's count of failed agentcomputer reconciles. */
async function failedReconciles(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('agentry_reconcile_errors_total')?.get();
  return (metric?.values ?? [])
    .filter((value) => value.labels.controller === 'agentcomputer')
    .reduce((sum, value) => sum + value.value, 0);
}

const agentComputer = (runtime: Runtime): AgentComputer => ({
  apiVersion: apiVersionOf(AgentComputerType),
  kind: AgentComputerType.kind,
  metadata: { name: NAME, namespace: NAMESPACE },
  spec: AgentComputerSpecSchema.parse({ runtime }),
});

/** Names of the objects of `type` left in the namespace. */
async function left(inner: EmbeddedStore, type: ResourceType): Promise<string[]> {
  const { items } = await inner.list(type, { namespace: NAMESPACE });
  return items.map((item) => `${type.kind}/${item.metadata.name}`);
}

let harness: PodControllerHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('the workload finalizer racing a deletion', () => {
  it('a workspace deleted before its finalizer is stored gets no Pod, and what was made is collected', async () => {
    const racing = await podControllerHarness('agentry-ac-race-', (embedded) => {
      return new DeleteBeforeFinalizerStore(embedded);
    });
    harness = racing;
    addAgentComputerController(racing.manager, racing.deps);
    await racing.manager.start();
    await racing.inner.create(AgentComputerType, agentComputer('pod'));
    await until('the deletion', () => Promise.resolve(racing.store.deleted ? true : undefined));
    await sleep(1_500); // the failed pass's concurrent creates land, and any retry runs
    const types = [SecretType, PersistentVolumeClaimType, ServiceType, NetworkPolicyType, PodType];
    const remaining = (await Promise.all(types.map((type) => left(racing.inner, type)))).flat();
    expect({
      remaining,
      podCreates: racing.store.summary().filter((call) => call.endsWith('create Pod')),
      agentComputer: await racing.inner.get(AgentComputerType, NAMESPACE, NAME),
    }).toEqual({ remaining: [], podCreates: [], agentComputer: undefined });
  });

  it('a finalizing pass that finds the workspace already finalized and gone ends without a failure', async () => {
    const racing = await podControllerHarness('agentry-ac-finalized-', (embedded) => {
      return new FinalizedMeanwhileStore(embedded);
    });
    harness = racing;
    addAgentComputerController(racing.manager, racing.deps);
    await racing.manager.start();
    await racing.inner.create(AgentComputerType, agentComputer('pod'));
    await until('the workload finalizer', async () => {
      const stored = await racing.inner.get(AgentComputerType, NAMESPACE, NAME);
      return stored?.metadata.finalizers?.includes(WORKLOAD_FINALIZER) === true ? true : undefined;
    });
    await racing.inner.delete(AgentComputerType, NAMESPACE, NAME);
    await until('the workspace to be gone', async () =>
      racing.store.finalizedMeanwhile &&
      (await racing.inner.get(AgentComputerType, NAMESPACE, NAME)) === undefined
        ? true
        : undefined,
    );
    await sleep(500); // a failed pass would be counted by now
    expect(await failedReconciles(racing.managerRegistry)).toBe(0);
  });

  it('the process runtime runs a workload only once its finalizer is stored', async () => {
    const plain = await podControllerHarness('agentry-ac-process-', (embedded) => embedded);
    harness = plain;
    const finalizersAtApply: (string[] | undefined)[] = [];
    const probe: WorkloadRuntime = {
      ...readyRuntime,
      apply: async (object, context, signal) => {
        const stored = await plain.inner.get(AgentComputerType, NAMESPACE, object.metadata.name);
        finalizersAtApply.push(stored?.metadata.finalizers);
        return readyRuntime.apply(object, context, signal);
      },
    };
    addAgentComputerController(plain.manager, {
      ...plain.deps,
      runtimes: new Map<Runtime, WorkloadRuntime>([['process', probe]]),
      defaultRuntime: 'process',
    });
    await plain.manager.start();
    await plain.inner.create(AgentComputerType, agentComputer('process'));
    await until('the first apply', () => Promise.resolve(finalizersAtApply.length > 0 ? true : undefined));
    expect(finalizersAtApply[0]).toEqual([WORKLOAD_FINALIZER]);
  });
});
