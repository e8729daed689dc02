// The pod runtime on the real node (a kubelet and containerd on this machine, Agentry installed with
// helm from our images: test/realnode/harness), through the API Service as a user reaches it.
import { KubeConfig } from '@kubernetes/client-node';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { startRealNodeDeployment } from '../../test/realnode/harness/deployment.js';
import { destroyRealNode } from '../../test/realnode/harness/teardown.js';
import { cleanupStep } from '../support/cleanup.js';
import { raiseOrganizationLimits } from '../task-latency/stack.js';
import { ORGANIZATION_LIMITS, REAL_NODE_POOL_CPU, REAL_NODE_SIZES } from './config.js';
import { podTimeline } from './pod-timeline.js';
import type { Target } from './target.js';

export async function onRealNode(work: (target: Target) => Promise<void>): Promise<void> {
  const { node, state } = await startRealNodeDeployment();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(state.kubeconfig);
  const store = KubernetesStore.fromKubeConfig(kubeConfig);
  try {
    await raiseOrganizationLimits(store, state.org, ORGANIZATION_LIMITS);
    await work({
      label: `Real node (pod runtime, 250m CPU per workspace; Agentry installed with helm, the API through its Service${REAL_NODE_POOL_CPU === undefined ? '' : `; pool members ${REAL_NODE_POOL_CPU} CPU`})`,
      endpoint: { api: { url: state.apiUrl }, key: state.apiKey },
      store,
      namespace: state.orgNamespace,
      sizes: REAL_NODE_SIZES,
      timeline: (workspaceId, postedAt) => podTimeline(store, state.orgNamespace, workspaceId, postedAt),
      poolResources: REAL_NODE_POOL_CPU === undefined ? undefined : { cpu: REAL_NODE_POOL_CPU },
    });
  } finally {
    await cleanupStep('closing the store', () => store.close());
    await destroyRealNode(node);
  }
}
