// Measured: AgentComputers (pod runtime) created with the Kubernetes store while the operator runs in
// this process, until every one is `ready` (agentComputerStatus).
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerSpecSchema, AgentComputerType } from '../../crds/index.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { sumsByLabel, total } from '../support/metrics.js';
import { addWorkloadNamespace } from './cluster-setup.js';
import { IMAGE, KEEPALIVE, MAX_CONNECTIONS, RESOURCES } from './config.js';
import { BenchKubeConfig, openedSockets } from './kube-config.js';
import { createUntilAllReady, phaseResult } from './phase.js';
import type { PhaseResult } from './phase.js';
import { collectGarbage, memory, mib } from './memory.js';
import type { Memory } from './memory.js';

export interface MeasuredResult extends PhaseResult {
  workers: number;
  operatorRequests: number;
  memory: {
    before: Memory;
    afterStart: Memory;
    peakRssMiB: number;
    after: Memory;
    afterGc: Memory;
  };
  reconciles: Record<string, number>;
  reconcileSeconds: Record<string, number>;
  reconcileErrors: number;
}

async function reconcileMetrics(
  registry: Registry,
): Promise<Pick<MeasuredResult, 'reconciles' | 'reconcileSeconds' | 'reconcileErrors'>> {
  const metric = 'agentry_reconcile_duration_seconds';
  const where = { controller: 'agentcomputer' };
  const counts = await sumsByLabel(registry, metric, 'result', { sample: `${metric}_count`, where });
  const sums = await sumsByLabel(registry, metric, 'result', { sample: `${metric}_sum`, where });
  const errors = await sumsByLabel(registry, 'agentry_reconcile_errors_total', 'controller', { where });
  return {
    reconciles: Object.fromEntries(counts),
    reconcileSeconds: Object.fromEntries([...sums].map(([result, s]) => [result, Math.round(s * 100) / 100])),
    reconcileErrors: total(errors),
  };
}

interface BenchOperator {
  operator: RunningOperator;
  store: KubernetesStore;
  kubeConfig: BenchKubeConfig;
  registry: Registry;
}

/** The operator as shipped, with only the pod runtime, on a store of its own (its requests counted). */
async function startBenchOperator(kubeconfig: string, workers: number): Promise<BenchOperator> {
  const kubeConfig = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const store = KubernetesStore.fromKubeConfig(
    kubeConfig,
    MAX_CONNECTIONS === undefined ? {} : { maxConnections: MAX_CONNECTIONS },
  );
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  const runtime = new PodRuntime({
    store,
    controlNamespace: 'agentry-system',
    defaultImage: IMAGE,
    defaults: RESOURCES,
    logger,
  });
  const operator = await startOperator({
    store,
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    logger,
    registry,
    runtimes: new Map([['pod', runtime]]),
    defaultRuntime: 'pod',
    agentComputerWorkers: workers,
  });
  return { operator, store, kubeConfig, registry };
}

/** Creates N AgentComputers and waits for all to be ready; on a stall, says which Ready reasons held. */
export async function createAllUntilReady(
  client: KubernetesStore,
  namespace: string,
  names: readonly string[],
  start: number,
): Promise<{ ready: number[]; createdMs: number }> {
  let reasons = new Map<string, number>();
  const create = (i: number): Promise<unknown> =>
    client.create(AgentComputerType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'AgentComputer',
      metadata: { name: names[i] ?? '', namespace },
      spec: AgentComputerSpecSchema.parse({ runtime: 'pod', idleTimeout: '0s' }),
    });
  const readyNames = async (): Promise<string[]> => {
    const { items } = await client.list(AgentComputerType, { namespace });
    reasons = new Map();
    for (const ac of items) {
      const reason = ac.status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? 'none';
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    return items.filter((ac) => agentComputerStatus(ac) === 'ready').map((ac) => ac.metadata.name);
  };
  return createUntilAllReady('agent computers', start, create, readyNames).catch((err: unknown) => {
    throw new Error(`Ready reasons: ${JSON.stringify(Object.fromEntries(reasons))}`, { cause: err });
  });
}

export async function runMeasured(
  admin: KubernetesStore,
  kubeconfig: string,
  namespace: string,
  workers: number,
): Promise<MeasuredResult> {
  const benchKc = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const client = KubernetesStore.fromKubeConfig(benchKc);
  const names = await addWorkloadNamespace(admin, namespace, 'ac');

  collectGarbage();
  const before = memory();
  const { operator, store, kubeConfig: operatorKc, registry } = await startBenchOperator(kubeconfig, workers);
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  try {
    const afterStart = memory();
    const requests0 = benchKc.requests + operatorKc.requests;
    const operatorRequests0 = operatorKc.requests;
    const sockets0 = openedSockets();
    const start = performance.now();
    const { ready, createdMs } = await createAllUntilReady(client, namespace, names, start);
    const totalMs = performance.now() - start;
    const requests = benchKc.requests + operatorKc.requests - requests0;
    const operatorRequests = operatorKc.requests - operatorRequests0;
    const socketCount = openedSockets() - sockets0;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const after = memory();
    collectGarbage();
    const afterGc = memory();
    return {
      workers,
      ...phaseResult(ready, { startedAt: start, totalMs, createdMs, requests, sockets: socketCount }),
      operatorRequests,
      memory: { before, afterStart, peakRssMiB: mib(peakRss), after, afterGc },
      ...(await reconcileMetrics(registry)),
    };
  } finally {
    clearInterval(sampler);
    await operator.stop();
    await store.close();
    await client.close();
  }
}
