// Regression: while a workspace was not ready the operator reconciled it every 2 s, whatever
// happened (a reconcile per booting workspace per tick, hundreds at once at scale). Its workload's
// own objects' watch events wake it now; a long safety requeue is all that is left of the polling.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerSpecSchema, AgentComputerType, apiVersionOf } from '../../crds/index.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import { NOT_READY_SAFETY_REQUEUE_MS } from '../../operator/agent-computer/reconciler.js';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import type { EmbeddedStore } from '../../platform/store/embedded.js';
import { appliesWhileQuiet, podControllerHarness } from '../support/pod-controller-harness.js';
import type { PodControllerHarness } from '../support/pod-controller-harness.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
const NAME = 'booting';

let harness: PodControllerHarness;
let store: EmbeddedStore;

beforeEach(async () => {
  harness = await podControllerHarness('agentry-ac-readiness-', (embedded) => embedded);
  store = harness.inner;
  addAgentComputerController(harness.manager, harness.deps);
});

afterEach(async () => {
  await harness.close();
});

/** What a kubelet writes once the runner listens: Running, and Ready. */
const readyStatus = (pod: Pod): Pod => ({
  ...pod,
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});

async function workspacePod(): Promise<Pod> {
  return until('the workspace pod', async () => {
    const { items } = await store.list(PodType, { namespace: NAMESPACE });
    return items[0];
  });
}

describe('a workspace that is not ready yet', () => {
  it('is not reconciled again while nothing changes, and is ready once its Pod turns ready', async () => {
    const applies = jest.spyOn(harness.podRuntime, 'apply');
    await harness.manager.start();
    await store.create(AgentComputerType, {
      apiVersion: apiVersionOf(AgentComputerType),
      kind: AgentComputerType.kind,
      metadata: { name: NAME, namespace: NAMESPACE },
      spec: AgentComputerSpecSchema.parse({ runtime: 'pod' }),
    });
    const pod = await workspacePod();
    await until('the first status', async () =>
      (await store.get(AgentComputerType, NAMESPACE, NAME))?.status?.conditions === undefined
        ? undefined
        : true,
    );
    expect(await appliesWhileQuiet(applies)).toBe(0);

    await store.replaceStatus(
      PodType,
      readyStatus((await store.get(PodType, NAMESPACE, pod.metadata.name)) ?? pod),
    );
    // Well under the safety requeue: only the Pod's watch event can have woken it this soon.
    await until(
      'the workspace to be ready',
      async () => {
        const ac = await store.get(AgentComputerType, NAMESPACE, NAME);
        return ac !== undefined && agentComputerStatus(ac) === 'ready' ? true : undefined;
      },
      NOT_READY_SAFETY_REQUEUE_MS / 2,
    );
  });
});
