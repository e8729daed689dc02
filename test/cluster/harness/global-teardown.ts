import { CLUSTER_ENV, clusterStateFromEnv, destroyCluster } from './cluster.js';

export default async function globalTeardown(): Promise<void> {
  const state = clusterStateFromEnv(process.env[CLUSTER_ENV]);
  if (state !== undefined) await destroyCluster(state);
}
