// A controller manager over an embedded store with the pod runtime and nothing else: for tests of
// what the AgentComputer and ContextLake controllers do with their workloads' Kubernetes objects
// (no cluster: nothing runs the Pods, a test writes their status as a kubelet would).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import type { Runtime } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import type { Logger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import type { ResourceStore } from '../../platform/store/types.js';

export interface PodControllerHarness<S extends ResourceStore = ResourceStore> {
  /** The store itself, for the test's own reads and writes. */
  inner: EmbeddedStore;
  /** What the operator uses: what `wrap` made of `inner`. */
  store: S;
  podRuntime: PodRuntime;
  manager: ControllerManager;
  /** The manager's metrics: reconcile durations and errors per controller. */
  managerRegistry: Registry;
  /** What an `add…Controller` of a workload's owner takes. */
  deps: {
    store: ResourceStore;
    logger: Logger;
    registry: Registry;
    runtimes: ReadonlyMap<Runtime, WorkloadRuntime>;
    defaultRuntime: Runtime;
    installationKey: InstallationKey;
  };
  close(): Promise<void>;
}

export async function podControllerHarness<S extends ResourceStore = EmbeddedStore>(
  prefix: string,
  wrap: (store: EmbeddedStore) => S,
): Promise<PodControllerHarness<S>> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const inner = await EmbeddedStore.open(dir);
  const store = wrap(inner);
  const logger = createLogger({ level: 'silent' });
  const podRuntime = new PodRuntime({
    store,
    controlNamespace: 'agentry-system',
    defaultImage: 'registry.invalid/agentry:test',
    defaults: { cpu: '1', memory: '1Gi', disk: '5Gi' },
    logger,
  });
  const managerRegistry = new Registry();
  const manager = new ControllerManager({ store, logger, registry: managerRegistry });
  const deps = {
    store,
    logger,
    registry: new Registry(),
    runtimes: new Map<Runtime, WorkloadRuntime>([['pod', podRuntime]]),
    defaultRuntime: 'pod' as const,
    installationKey: new InstallationKey(randomBytes(32)),
  };
  return {
    inner,
    store,
    podRuntime,
    manager,
    managerRegistry,
    deps,
    async close() {
      await manager.stop();
      await inner.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Longer than the 2 s tick the operator used to poll booting workloads at, with margin for a loaded machine. */
const QUIET_MS = 3_000;

/**
 * How many more times the runtime applied a workload while nothing changed for QUIET_MS, counted
 * once the passes woken by the first pass's own writes (finalizer, objects, status) have ended.
 */
export async function appliesWhileQuiet(applies: { mock: { calls: readonly unknown[] } }): Promise<number> {
  await sleep(1_000);
  const settled = applies.mock.calls.length;
  await sleep(QUIET_MS);
  return applies.mock.calls.length - settled;
}
