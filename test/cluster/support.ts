import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { NamespaceType } from '../../crds/index.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { CLUSTER_ENV, clusterStateFromEnv, kubectlFlags } from './harness/cluster.js';
import type { ClusterState } from './harness/cluster.js';
import { run } from './harness/tools.js';
import { until } from '../support/until.js';

/** The cluster global setup started; a test outside the cluster project has none and fails loudly. */
export function testCluster(): ClusterState & { motoUrl: string } {
  const state = clusterStateFromEnv(process.env[CLUSTER_ENV]);
  if (state?.motoUrl === undefined) {
    throw new Error(`no test cluster: run the cluster project (npm run test:cluster), which starts one`);
  }
  return { ...state, motoUrl: state.motoUrl };
}

/** A store on the test cluster's real kube-apiserver. */
export function clusterStore(): KubernetesStore {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(testCluster().kubeconfig);
  return KubernetesStore.fromKubeConfig(kubeConfig);
}

/** Creates a namespace of its own for a test file; returns its name. */
export async function createTestNamespace(store: KubernetesStore, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

/** kubectl against the test cluster (the harness's own build). */
export function kubectl(args: string[], input?: string): Promise<string> {
  const cluster = testCluster();
  return run('kubectl', [...kubectlFlags(cluster), ...args], {
    env: { ...process.env, PATH: `${cluster.toolsPath}:${process.env.PATH ?? ''}` },
    ...(input === undefined ? {} : { input }),
  });
}

/** Polls until `check` returns a value, for effects of controllers that act asynchronously. */
export const eventually = <T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> => until(what, check, timeoutMs, 200);
