// Jest global setup of the cluster project: a real control plane for the tests (see cluster.ts).
import { CLUSTER_ENV, clusterStateOf, destroyCluster, startCluster } from './cluster.js';

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const cluster = await startCluster();
  const state = clusterStateOf(cluster);
  // Workers start after global setup and inherit the environment: this is how tests find the cluster.
  process.env[CLUSTER_ENV] = JSON.stringify(state);
  process.stderr.write(
    `\ncluster ${cluster.name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  // Jest runs no teardown on an interrupt: tear down here, and reap after a kill -9 on the next start.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      void destroyCluster(state).finally(() => process.exit(130));
    });
  }
}
