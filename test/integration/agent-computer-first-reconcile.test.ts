// The API calls an AgentComputer's first reconcile makes with the pod runtime. It used to make
// ~14 of them one after the other (a read before each create, the owned Pods listed from the store,
// the AgentComputer re-read), and every pass its own writes woke read everything again; at scale
// those sequential round trips were the operator's wall time. Now it reads from the informer
// caches, creates what does not depend on anything at once (the finalizer too: owner references
// collect all the pod runtime makes), and the passes that follow write nothing.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentComputerSpecSchema, AgentComputerType, apiVersionOf } from '../../crds/index.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { EmbeddedStore } from '../../platform/store/embedded.js';
import { podControllerHarness } from '../support/pod-controller-harness.js';
import type { PodControllerHarness } from '../support/pod-controller-harness.js';
import { RecordingStore } from '../support/recording-store.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
const NAME = 'first';

let harness: PodControllerHarness<RecordingStore>;
let inner: EmbeddedStore;
let store: RecordingStore;

beforeEach(async () => {
  harness = await podControllerHarness('agentry-ac-first-', (embedded) => new RecordingStore(embedded));
  inner = harness.inner;
  store = harness.store;
  addAgentComputerController(harness.manager, harness.deps);
});

afterEach(async () => {
  await harness.close();
});

describe("an AgentComputer's first reconcile with the pod runtime", () => {
  it('makes 7 API calls in 3 sequential rounds, and the passes its own writes wake make none', async () => {
    await harness.manager.start();
    store.reset();
    await inner.create(AgentComputerType, {
      apiVersion: apiVersionOf(AgentComputerType),
      kind: AgentComputerType.kind,
      metadata: { name: NAME, namespace: NAMESPACE },
      spec: AgentComputerSpecSchema.parse({ runtime: 'pod' }),
    });
    await until('the pod and the first status', async () => {
      const { items } = await inner.list(PodType, { namespace: NAMESPACE });
      const ac = await inner.get(AgentComputerType, NAMESPACE, NAME);
      return items.length > 0 && ac?.status?.conditions !== undefined ? true : undefined;
    });
    await sleep(1_500); // the passes woken by the first one's own writes (finalizer, objects, status) end
    expect(store.summary()).toEqual([
      '1: replace AgentComputer',
      '1: create Secret',
      '1: create PersistentVolumeClaim',
      '1: create Service',
      '1: create NetworkPolicy',
      '2: create Pod',
      '3: replaceStatus AgentComputer',
    ]);
  });
});
