// The pod runtime on the real node (a kubelet and containerd on this machine, Agentry installed with
// helm from our images: test/realnode/harness), through the API Service as a user reaches it.
import { KubeConfig } from '@kubernetes/client-node';
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { startRealNodeDeployment } from '../../test/realnode/harness/deployment.js';
import { destroyRealNode } from '../../test/realnode/harness/teardown.js';
import { cleanupStep } from '../support/cleanup.js';
import { raiseOrganizationLimits } from '../task-latency/stack.js';
import {
  ORGANIZATION_LIMITS,
  REAL_NODE_LOGS_DIR,
  REAL_NODE_LOG_LEVEL,
  REAL_NODE_POOL_CPU,
  REAL_NODE_SIZES,
} from './config.js';
import { keepPodLogs } from './kept-pod-logs.js';
import { nodeActivity } from './node-activity.js';
import { podTimeline } from './pod-timeline.js';
import type { Target } from './target.js';

/** A helm values file with the bench's log level, when one is asked for. */
async function logLevelValues(): Promise<string[]> {
  if (REAL_NODE_LOG_LEVEL === undefined) return [];
  const file = join(await mkdtemp(join(tmpdir(), 'agentry-bench-values-')), 'log-level.yaml');
  await writeFile(file, `logLevel: ${REAL_NODE_LOG_LEVEL}\n`);
  return [file];
}

export async function onRealNode(work: (target: Target) => Promise<void>): Promise<void> {
  const { node, state } = await startRealNodeDeployment(undefined, { beforeInstall: logLevelValues });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(state.kubeconfig);
  const store = KubernetesStore.fromKubeConfig(kubeConfig);
  const logsDir = REAL_NODE_LOGS_DIR;
  const stopKeeping =
    logsDir === undefined ? undefined : keepPodLogs(node.paths.podLogs, state.orgNamespace, logsDir);
  try {
    await raiseOrganizationLimits(store, state.org, ORGANIZATION_LIMITS);
    await work({
      label: `Real node (pod runtime, 250m CPU per workspace; Agentry installed with helm, the API through its Service${REAL_NODE_POOL_CPU === undefined ? '' : `; pool members ${REAL_NODE_POOL_CPU} CPU`})`,
      endpoint: { api: { url: state.apiUrl }, key: state.apiKey },
      store,
      namespace: state.orgNamespace,
      sizes: REAL_NODE_SIZES,
      timeline: (workspaceId, postedAt) => podTimeline(store, state.orgNamespace, workspaceId, postedAt),
      busy: () => nodeActivity(store, state.orgNamespace),
      poolResources: REAL_NODE_POOL_CPU === undefined ? undefined : { cpu: REAL_NODE_POOL_CPU },
    });
  } finally {
    await cleanupStep('closing the store', () => store.close());
    if (stopKeeping !== undefined) await cleanupStep('keeping the workspace logs', stopKeeping);
    if (logsDir !== undefined)
      await cleanupStep(`copying the Pod logs to ${logsDir}`, () =>
        cp(node.paths.podLogs, logsDir, { recursive: true }),
      );
    await destroyRealNode(node);
  }
}
