// Baseline: what a client does by hand for one workload, a claim and a pod (as the runtime makes them),
// created with @kubernetes/client-node.
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { PersistentVolumeClaim, Pod } from '../../operator/runtimes/kube-objects.js';
import type { KubernetesStore } from '../../platform/store/kubernetes.js';
import { indices, pool } from '../support/pool.js';
import { addWorkloadNamespace } from './cluster-setup.js';
import { CONCURRENCY, IMAGE, KEEPALIVE, N, RESOURCES } from './config.js';
import { BenchKubeConfig, openedSockets } from './kube-config.js';
import { phaseResult, waitAllReady } from './phase.js';
import type { PhaseResult } from './phase.js';

/**
 * client-node's models are classes and its API functions take instances; what goes on the wire is
 * their JSON, which these objects (checked against our own types) are.
 */
const asV1Pod = (pod: Pod): V1Pod => pod as unknown as V1Pod;
const asV1Claim = (claim: PersistentVolumeClaim): V1PersistentVolumeClaim =>
  claim as unknown as V1PersistentVolumeClaim;

/** The runner pod's spec as the pod runtime makes it, its disk mounted from `claimName` when given. */
export function runnerPodSpec(claimName?: string): Pod['spec'] {
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    restartPolicy: 'Always',
    securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
    containers: [
      {
        name: 'runner',
        image: IMAGE,
        command: ['agentry', 'runner'],
        ports: [{ name: 'runner', containerPort: 8080, protocol: 'TCP' }],
        readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 5, failureThreshold: 3 },
        resources: {
          requests: { cpu: RESOURCES.cpu, memory: RESOURCES.memory },
          limits: { cpu: RESOURCES.cpu, memory: RESOURCES.memory },
        },
        volumeMounts: [{ name: 'code', mountPath: '/code' }],
      },
    ],
    ...(claimName === undefined ? {} : { volumes: [{ name: 'code', persistentVolumeClaim: { claimName } }] }),
  };
}

function baselinePod(namespace: string, name: string): Pod {
  const labels = { 'app.kubernetes.io/name': 'agentry-runner', 'agentry.dev/agent-computer': name };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: runnerPodSpec(`${name}-disk`),
  };
}

/** The disk claim's spec as the pod runtime makes it. */
export const diskClaimSpec = (): PersistentVolumeClaim['spec'] => ({
  accessModes: ['ReadWriteOnce'],
  resources: { requests: { storage: RESOURCES.disk } },
});

function baselineClaim(namespace: string, name: string): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: diskClaimSpec(),
  };
}

export async function runBaseline(
  admin: KubernetesStore,
  kubeconfig: string,
  namespace: string,
): Promise<PhaseResult> {
  const kc = new BenchKubeConfig(kubeconfig, KEEPALIVE);
  const core = kc.makeApiClient(CoreV1Api);
  const names = await addWorkloadNamespace(admin, namespace, 'bp');
  const requests0 = kc.requests;
  const sockets0 = openedSockets();
  const start = performance.now();
  let createdMs = 0;
  const creating = pool(indices(N), CONCURRENCY, async (i) => {
    const name = names[i] ?? '';
    const body = asV1Claim(baselineClaim(namespace, `${name}-disk`));
    await core.createNamespacedPersistentVolumeClaim({ namespace, body });
    await core.createNamespacedPod({ namespace, body: asV1Pod(baselinePod(namespace, name)) });
  }).then(() => {
    createdMs = performance.now() - start;
  });
  const ready = await waitAllReady('baseline pods', N, start, async () => {
    const { items } = await core.listNamespacedPod({ namespace });
    return items
      .filter((pod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((pod) => pod.metadata?.name ?? '');
  });
  await creating;
  const totalMs = performance.now() - start;
  return phaseResult(ready, {
    startedAt: start,
    totalMs,
    createdMs,
    requests: kc.requests - requests0,
    sockets: openedSockets() - sockets0,
  });
}
