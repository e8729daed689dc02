// Regression: while a context lake's workload was not ready the operator reconciled it every 2 s,
// whatever happened. Its workload's own objects' watch events wake it now, with a long safety
// requeue; only a lake server that answers and is still loading is polled.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { CONTEXT_LAKE_NAME, ContextLakeSpecSchema, ContextLakeType, apiVersionOf } from '../../crds/index.js';
import type { Runtime } from '../../crds/index.js';
import { addContextLakeController } from '../../operator/context-lake/controller.js';
import { LAKE_WORKLOAD_SAFETY_REQUEUE_MS } from '../../operator/context-lake/reconciler.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import { PodType } from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { until } from '../support/until.js';

const NAMESPACE = 'agentry-org-acme';
/** Longer than the old 2 s tick, with margin for a loaded machine. */
const QUIET_MS = 3_000;

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager;
let podRuntime: PodRuntime;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-readiness-'));
  store = await EmbeddedStore.open(dir);
  const logger = createLogger({ level: 'silent' });
  podRuntime = new PodRuntime({
    store,
    controlNamespace: 'agentry-system',
    defaultImage: 'registry.invalid/agentry:test',
    defaults: { cpu: '1', memory: '1Gi', disk: '5Gi' },
    logger,
  });
  manager = new ControllerManager({ store, logger, registry: new Registry() });
  addContextLakeController(manager, {
    store,
    logger,
    registry: new Registry(),
    runtimes: new Map<Runtime, WorkloadRuntime>([['pod', podRuntime]]),
    defaultRuntime: 'pod',
    installationKey: new InstallationKey(randomBytes(32)),
  });
});

afterEach(async () => {
  await manager.stop();
  await store.close();
  await rm(dir, { recursive: true, force: true });
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
    const applies = jest.spyOn(podRuntime, 'apply');
    await manager.start();
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
    await sleep(1_000); // the passes woken by the first one's own writes (finalizer, objects) end
    const settled = applies.mock.calls.length;
    await sleep(QUIET_MS);
    expect(applies.mock.calls.length).toBe(settled);

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
