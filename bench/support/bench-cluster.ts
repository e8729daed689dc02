// The KWOK cluster of a bench run (test/cluster/harness: a real kube-apiserver), torn down on
// SIGINT/SIGTERM too, with an admin client on it.
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { startCluster } from '../../test/cluster/harness/cluster.js';
import type { Cluster } from '../../test/cluster/harness/cluster.js';
import { BenchKubeConfig } from '../reconcile-throughput/kube-config.js';
import { progress } from './stats.js';

export async function startBenchCluster(): Promise<{ cluster: Cluster; admin: KubernetesStore }> {
  progress('starting a KWOK cluster');
  const cluster = await startCluster();
  const interrupted = (): void => {
    void cluster.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  return { cluster, admin: KubernetesStore.fromKubeConfig(new BenchKubeConfig(cluster.kubeconfig, false)) };
}
