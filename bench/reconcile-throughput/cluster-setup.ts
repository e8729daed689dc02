// Cluster preparation: fake nodes for the pods, a second service range, pre-bound volumes for the
// claims (with the store: client-node's models are classes, which plain objects may not stand in for
// under our lint rules).
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { NamespaceType, ObjectMetaSchema } from '../../crds/index.js';
import type { ResourceType } from '../../crds/index.js';
import type { KubernetesStore } from '../../platform/store/kubernetes.js';
import { PersistentVolumeType } from '../../test/cluster/kube-test-types.js';
import { indices, pool } from '../support/pool.js';
import { CONCURRENCY, N, PODS_PER_NODE, POLL_MS } from './config.js';

const LooseStatusSchema = z
  .looseObject({ conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional() })
  .optional();
const NodeSchema = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Node'),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}).optional(),
  status: LooseStatusSchema,
});
const NodeType: ResourceType<z.infer<typeof NodeSchema>> = {
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  namespaced: false,
  hasStatusSubresource: true,
  schema: NodeSchema,
};
/**
 * kube-apiserver's default service range is 10.0.0.0/24: 253 ClusterIPs, and the pod runtime makes a
 * Service per AgentComputer. A second ServiceCIDR (GA since 1.33) makes room without a flag.
 */
const ServiceCidrSchema = z.object({
  apiVersion: z.literal('networking.k8s.io/v1'),
  kind: z.literal('ServiceCIDR'),
  metadata: ObjectMetaSchema,
  spec: z.object({ cidrs: z.array(z.string()) }),
  status: LooseStatusSchema,
});
const ServiceCidrType: ResourceType<z.infer<typeof ServiceCidrSchema>> = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'ServiceCIDR',
  plural: 'servicecidrs',
  namespaced: false,
  hasStatusSubresource: true,
  schema: ServiceCidrSchema,
};

export async function addServiceRange(store: KubernetesStore): Promise<void> {
  await store.create(ServiceCidrType, {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name: 'bench' },
    spec: { cidrs: ['10.96.0.0/16'] },
  });
  for (;;) {
    const range = await store.get(ServiceCidrType, undefined, 'bench');
    if (range?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true) return;
    await sleep(POLL_MS);
  }
}

export async function addNodes(store: KubernetesStore, pods: number): Promise<void> {
  const count = Math.ceil(pods / (PODS_PER_NODE - 10));
  const capacity = { cpu: '32', memory: '256Gi', pods: String(PODS_PER_NODE) };
  await pool(indices(count), CONCURRENCY, (i) =>
    store.create(NodeType, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `bench-node-${i}`,
        annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { 'kubernetes.io/hostname': `bench-node-${i}`, 'kubernetes.io/os': 'linux', type: 'kwok' },
      },
      status: { allocatable: capacity, capacity },
    }),
  );
  for (;;) {
    const { items } = await store.list(NodeType, { labelSelector: 'type=kwok' });
    const ready = items.filter((node) =>
      node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (ready.length >= count) return;
    await sleep(POLL_MS);
  }
}

/** A new namespace and a volume pre-bound to each of `claims` in it. */
export async function addNamespaceWithVolumes(
  store: KubernetesStore,
  namespace: string,
  claims: string[],
): Promise<void> {
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await pool(indices(claims.length), CONCURRENCY, (i) =>
    store.create(PersistentVolumeType, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `${namespace}-${i}` },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        hostPath: { path: `/tmp/agentry-bench/${namespace}-${i}` },
        claimRef: { namespace, name: claims[i] },
      },
    }),
  );
}

/** N workload names (`prefix`-i) in a new namespace, with a pre-bound volume for each one's disk claim. */
export async function addWorkloadNamespace(
  admin: KubernetesStore,
  namespace: string,
  prefix: string,
): Promise<string[]> {
  const names = Array.from({ length: N }, (_, i) => `${prefix}-${i}`);
  await addNamespaceWithVolumes(
    admin,
    namespace,
    names.map((name) => `${name}-disk`),
  );
  return names;
}
