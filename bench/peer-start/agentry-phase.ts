// Agentry: N AgentComputers (pod runtime) reconciled by `agentry operator` as a process of its own,
// compiled as shipped, configured as shipped but for the workload's image and size, timed from the
// first create until every one is `ready`.
import type { ClusterState } from '../../test/cluster/harness/cluster.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { ensureNamespace } from '../../cli/bootstrap.js';
import { run } from '../../test/cluster/harness/tools.js';
import { addWorkloadNamespace } from '../reconcile-throughput/cluster-setup.js';
import { IMAGE, RESOURCES } from '../reconcile-throughput/config.js';
import { BenchKubeConfig } from '../reconcile-throughput/kube-config.js';
import { createAllUntilReady } from '../reconcile-throughput/measured.js';
import { startController } from './controller-process.js';
import { timeControllerPhase } from './controller-phase.js';
import type { ControllerPhase } from './controller-phase.js';

const CONTROL_NAMESPACE = 'agentry-system';

/** As `npm start` runs it: compiled to dist/ first (build-with-progress.mjs), without a loader. */
const operatorCommand = ['dist/cli/main.js', 'operator'];

export async function buildAgentry(): Promise<void> {
  await run(process.execPath, ['scripts/build-with-progress.mjs'], { timeoutMs: 10 * 60_000 });
}

export async function runAgentryPhase(
  admin: KubernetesStore,
  cluster: ClusterState,
  namespace: string,
): Promise<ControllerPhase> {
  await ensureNamespace(admin, CONTROL_NAMESPACE);
  const names = await addWorkloadNamespace(admin, namespace, 'ac');
  const operator = await startController(
    'agentry operator',
    process.execPath,
    operatorCommand,
    {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      KUBECONFIG: cluster.kubeconfig,
      AGENTRY_STORE: 'kubernetes',
      AGENTRY_NAMESPACE: CONTROL_NAMESPACE,
      AGENTRY_RUNTIMES: 'pod',
      AGENTRY_RUNNER_IMAGE: IMAGE,
      AGENTRY_WORKLOAD_CPU: RESOURCES.cpu,
      AGENTRY_WORKLOAD_MEMORY: RESOURCES.memory,
      AGENTRY_WORKLOAD_DISK: RESOURCES.disk,
      AGENTRY_METRICS_PORT: '0',
      // Like the peer, which runs with --leader-elect=false: one replica, no Lease to renew.
      AGENTRY_LEADER_ELECTION: 'false',
    },
    /operator running/,
  );
  const client = KubernetesStore.fromKubeConfig(new BenchKubeConfig(cluster.kubeconfig, false));
  try {
    return await timeControllerPhase(operator, (start) =>
      createAllUntilReady(client, namespace, names, start),
    );
  } finally {
    await operator.stop();
    await client.close();
  }
}
