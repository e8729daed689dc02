// Regression: while a context lake's workload was not ready the operator reconciled it every 2 s,
// whatever happened. Its workload's own objects' watch events wake it now, with a long safety
// requeue; only a lake server that answers and is still loading is polled.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { CONTEXT_LAKE_NAME, ContextLakeSpecSchema, ContextLakeType, apiVersionOf } from '../../crds/index.js';
import { addContextLakeController } from '../../operator/context-lake/controller.js';
import { LAKE_WORKLOAD_SAFETY_REQUEUE_MS } from '../../operator/context-lake/reconciler.js';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import type { EmbeddedStore } from '../../platform/store/embedded.js';
import { appliesWhileQuiet, podControllerHarness } from '../support/pod-controller-harness.js';
import type { PodControllerHarness } from '../support/pod-controller-harness.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';

let harness: PodControllerHarness;
let store: EmbeddedStore;

beforeEach(async () => {
  harness = await podControllerHarness('agentry-lake-readiness-', (embedded) => embedded);
  store = harness.inner;
  addContextLakeController(harness.manager, harness.deps);
});

afterEach(async () => {
  await harness.close();
});

/** What a kubelet writes once the container started; not Ready: the lake server is not asked yet. */
const runningStatus = (pod: Pod): Pod => ({
  ...pod,
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
});

const lakeMessage = async (): Promise<string | undefined> =>
  (await store.get(ContextLakeType, NAMESPACE, CONTEXT_LAKE_NAME))?.status?.conditions?.find(
    (c) => c.type === 'Ready',
  )?.message;

describe('a context lake whose workload is not ready yet', () => {
  it('is not reconciled again while nothing changes, and is woken by its Pod changing', async () => {
    const applies = jest.spyOn(harness.podRuntime, 'apply');
    await harness.manager.start();
    await store.create(ContextLakeType, {
      apiVersion: apiVersionOf(ContextLakeType),
      kind: ContextLakeType.kind,
      metadata: { name: CONTEXT_LAKE_NAME, namespace: NAMESPACE },
      spec: ContextLakeSpecSchema.parse({
        runtime: 'pod',
        operatingMode: 'Running',
        config: { name: 'acme' },
      }),
    });
    const pod = await until('the lake pod', async () => {
      const { items } = await store.list(PodType, { namespace: NAMESPACE });
      return items[0];
    });
    await until('the first status', async () => ((await lakeMessage()) === undefined ? undefined : true));
    expect(await appliesWhileQuiet(applies)).toBe(0);

    await store.replaceStatus(
      PodType,
      runningStatus((await store.get(PodType, NAMESPACE, pod.metadata.name)) ?? pod),
    );
    // Well under the safety requeue: only the Pod's watch event can have woken it this soon.
    await until(
      'the lake to see its pod running',
      async () => ((await lakeMessage())?.includes('is running') === true ? true : undefined),
      LAKE_WORKLOAD_SAFETY_REQUEUE_MS / 2,
    );
  });
});
