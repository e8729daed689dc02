// The pod runtime against a real kube-apiserver: real scheduling (KWOK nodes make pods Running and
// Ready), real PersistentVolume binding, real garbage collection by kube-controller-manager.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  ObjectMetaSchema,
  SecretType,
  secretData,
} from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec, ResourceType } from '../../crds/index.js';
import { createLogger } from '../../platform/log.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
} from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { BLOCKED_IPV4_RANGES } from '../../operator/runtimes/network-policy.js';
import { PodRuntime, podWorkloadNames } from '../../operator/runtimes/pod.js';
import { RUNNER_PORT } from '../../operator/runtimes/types.js';
import type { WorkloadContext, WorkloadObservation } from '../../operator/runtimes/types.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';
import { PersistentVolumeType } from './kube-test-types.js';

const StorageClassSchema = z.object({
  apiVersion: z.literal('storage.k8s.io/v1'),
  kind: z.literal('StorageClass'),
  metadata: ObjectMetaSchema,
  provisioner: z.string(),
  allowVolumeExpansion: z.boolean().optional(),
});
const StorageClassType: ResourceType<z.infer<typeof StorageClassSchema>> = {
  group: 'storage.k8s.io',
  version: 'v1',
  kind: 'StorageClass',
  plural: 'storageclasses',
  namespaced: false,
  hasStatusSubresource: false,
  schema: StorageClassSchema,
};
const store = clusterStore();
const runtimeOptions = {
  store,
  controlNamespace: 'agentry-system',
  defaultImage: 'registry.invalid/agentry-runner:test',
  defaults: { cpu: '1', memory: '1Gi', disk: '5Gi' },
  logger: createLogger({ level: 'silent' }),
};
const runtime = new PodRuntime(runtimeOptions);
const signal = new AbortController().signal;
const volumes: string[] = [];
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace(store, 'pod-runtime');
});
afterAll(async () => {
  for (const volume of volumes)
    await store.delete(PersistentVolumeType, undefined, volume).catch(() => undefined);
  await store.close();
});

/** An AgentComputer in the store (so it has a uid), its token Secret, and a volume for its disk. */
async function agentComputer(
  name: string,
  spec: Partial<AgentComputerSpec> = {},
  storageClassName = '',
): Promise<{ ac: AgentComputer; context: WorkloadContext }> {
  const ac = await store.create(AgentComputerType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name, namespace },
    spec: AgentComputerSpecSchema.parse({ runtime: 'pod', ...spec }),
  });
  const token = `tok-${randomBytes(12).toString('hex')}`;
  await store.create(SecretType, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-token`, namespace },
    data: secretData({ token }),
  });
  const volume = `${namespace}-${name}`;
  volumes.push(volume);
  await store.create(PersistentVolumeType, {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: volume },
    spec: {
      capacity: { storage: '20Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName,
      hostPath: { path: `/tmp/agentry/${volume}` },
      claimRef: { namespace, name: `${name}-disk` },
    },
  });
  return { ac, context: { tokenSecretName: `${name}-token`, token } };
}

/** Applies the runtime (as the reconciler would, again and again) until `until` holds. */
async function applyUntil(
  ac: AgentComputer,
  context: WorkloadContext,
  what: string,
  until: (observation: WorkloadObservation) => boolean,
  using: PodRuntime = runtime,
): Promise<WorkloadObservation> {
  return eventually(what, async () => {
    const current = await store.get(AgentComputerType, namespace, ac.metadata.name);
    if (current === undefined) throw new Error(`AgentComputer ${ac.metadata.name} vanished`);
    const observation = await using.apply(current, context, signal);
    return until(observation) ? observation : undefined;
  });
}

const isReady = (o: WorkloadObservation): boolean => o.ready;

async function changeSpec(ac: AgentComputer, change: Partial<AgentComputerSpec>): Promise<AgentComputer> {
  const current = await store.get(AgentComputerType, namespace, ac.metadata.name);
  if (current === undefined) throw new Error(`AgentComputer ${ac.metadata.name} vanished`);
  return store.replace(AgentComputerType, { ...current, spec: { ...current.spec, ...change } });
}

const podsOf = async (name: string): Promise<Pod[]> =>
  (await store.list(PodType, { namespace, labelSelector: `agentry.dev/agent-computer=${name}` })).items;

const ownerOf = (ac: AgentComputer): unknown => [
  {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    name: ac.metadata.name,
    uid: ac.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  },
];

describe('a running pod workload', () => {
  let ac: AgentComputer;
  let context: WorkloadContext;
  let ready: WorkloadObservation;

  beforeAll(async () => {
    ({ ac, context } = await agentComputer('box', { resources: { cpu: '2', memory: '4Gi', disk: '10Gi' } }));
    ready = await applyUntil(ac, context, 'pod ready', isReady);
  });

  it('reports the pod as its sandbox and the Service as its endpoint once the pod is Ready', () => {
    expect(ready).toMatchObject({
      provisioned: true,
      running: true,
      ready: true,
      sandboxId: podWorkloadNames(ac).pod,
      endpoint: `http://box-runner.${namespace}.svc:${RUNNER_PORT}`,
      reason: 'RunnerReady',
    });
  });

  it('claims a ReadWriteOnce disk of spec.resources.disk, owned by the AgentComputer', async () => {
    const pvc = await store.get(PersistentVolumeClaimType, namespace, 'box-disk');
    expect(pvc?.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(pvc?.spec.resources?.requests?.storage).toBe('10Gi');
    expect(pvc?.metadata.ownerReferences).toEqual(ownerOf(ac));
    expect(pvc?.metadata.labels?.['agentry.dev/agent-computer']).toBe('box');
  });

  it('serves the runner port through a Service selecting the workload labels', async () => {
    const service = await store.get(ServiceType, namespace, 'box-runner');
    expect(service?.spec.selector).toEqual({
      'app.kubernetes.io/name': 'agentry-runner',
      'app.kubernetes.io/managed-by': 'agentry',
      'agentry.dev/agent-computer': 'box',
    });
    expect(service?.spec.ports).toMatchObject([
      { port: RUNNER_PORT, targetPort: RUNNER_PORT, protocol: 'TCP' },
    ]);
    expect(service?.metadata.ownerReferences).toEqual(ownerOf(ac));
  });

  it('admits the control plane on the runner port, the API server (previews) on the others, and blocks cluster and metadata egress', async () => {
    const policy = await store.get(NetworkPolicyType, namespace, 'box-runner');
    expect(policy?.spec.podSelector.matchLabels?.['agentry.dev/agent-computer']).toBe('box');
    expect(policy?.spec.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
            podSelector: {
              matchExpressions: [
                {
                  key: 'app.kubernetes.io/name',
                  operator: 'In',
                  values: ['agentry-api', 'agentry-operator'],
                },
              ],
            },
          },
        ],
        ports: [{ protocol: 'TCP', port: RUNNER_PORT }],
      },
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } },
            podSelector: {
              matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['agentry-api'] }],
            },
          },
        ],
      },
    ]);
    expect(policy?.spec.egress?.[0]).toEqual({
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: BLOCKED_IPV4_RANGES } }],
    });
    expect(policy?.metadata.ownerReferences).toEqual(ownerOf(ac));
  });

  it('runs the pod without a service-account token, as non-root, without privilege escalation', async () => {
    const [pod] = await podsOf('box');
    expect(pod?.spec.automountServiceAccountToken).toBe(false);
    expect(pod?.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod?.spec.containers[0]).toMatchObject({
      name: 'runner',
      command: ['agentry', 'runner'],
      securityContext: { allowPrivilegeEscalation: false },
    });
    expect(pod?.spec.restartPolicy).toBe('Always');
  });

  it('passes the token from its Secret by reference, never in the pod spec', async () => {
    const [pod] = await podsOf('box');
    expect(pod?.spec.containers[0]).toMatchObject({
      env: expect.arrayContaining([
        { name: 'AGENTRY_RUNNER_TOKEN', valueFrom: { secretKeyRef: { name: 'box-token', key: 'token' } } },
        { name: 'AGENTRY_RUNNER_WORKDIR', value: '/code' },
        { name: 'AGENTRY_RUNNER_STATE_DIR', value: '/var/lib/agentry-runner' },
      ]),
    });
    expect(JSON.stringify(pod)).not.toContain(context.token);
  });

  it('mounts the disk at /code and sizes the container from spec.resources', async () => {
    const [pod] = await podsOf('box');
    expect(pod?.spec.volumes).toEqual([{ name: 'code', persistentVolumeClaim: { claimName: 'box-disk' } }]);
    expect(pod?.spec.containers[0]).toMatchObject({
      image: 'registry.invalid/agentry-runner:test',
      volumeMounts: [
        { name: 'code', mountPath: '/code', subPath: 'code' },
        { name: 'code', mountPath: '/var/lib/agentry-runner', subPath: 'runner-state' },
      ],
      resources: { requests: { cpu: '2', memory: '4Gi' }, limits: { cpu: '2', memory: '4Gi' } },
      readinessProbe: { tcpSocket: { port: RUNNER_PORT } },
    });
    expect(pod?.metadata.ownerReferences).toEqual(ownerOf(ac));
  });

  it('writes nothing when applied again to a converged workload', async () => {
    const versions = async (): Promise<(string | undefined)[]> => [
      (await store.get(PersistentVolumeClaimType, namespace, 'box-disk'))?.metadata.resourceVersion,
      (await store.get(ServiceType, namespace, 'box-runner'))?.metadata.resourceVersion,
      (await store.get(NetworkPolicyType, namespace, 'box-runner'))?.metadata.resourceVersion,
      ...(await podsOf('box')).map((pod) => pod.metadata.resourceVersion),
    ];
    const before = await versions();
    await runtime.apply(ac, context, signal);
    expect(await versions()).toEqual(before);
  });
});

describe('the life of a pod workload', () => {
  it('deletes the pod on hibernation and keeps the disk', async () => {
    const { ac, context } = await agentComputer('sleepy');
    await applyUntil(ac, context, 'ready', isReady);
    const disk = await store.get(PersistentVolumeClaimType, namespace, 'sleepy-disk');
    await changeSpec(ac, { operatingMode: 'Hibernated' });
    const hibernated = await applyUntil(ac, context, 'hibernated', (o) => o.reason === 'Hibernated');
    expect(hibernated).toMatchObject({ provisioned: true, running: false, ready: false });
    expect(await podsOf('sleepy')).toEqual([]);
    expect((await store.get(PersistentVolumeClaimType, namespace, 'sleepy-disk'))?.metadata.uid).toBe(
      disk?.metadata.uid,
    );
  });

  it('starts a pod on the same disk when resumed', async () => {
    const { ac, context } = await agentComputer('resumed', { operatingMode: 'Hibernated' });
    await applyUntil(ac, context, 'hibernated', (o) => o.reason === 'Hibernated');
    const disk = await store.get(PersistentVolumeClaimType, namespace, 'resumed-disk');
    await changeSpec(ac, { operatingMode: 'Running' });
    await applyUntil(ac, context, 'ready again', isReady);
    expect((await store.get(PersistentVolumeClaimType, namespace, 'resumed-disk'))?.metadata.uid).toBe(
      disk?.metadata.uid,
    );
  });

  it('redeploys as a new pod on the same disk when restartedAt changes, after the old pod is gone', async () => {
    const { ac, context } = await agentComputer('redeployed');
    const first = await applyUntil(ac, context, 'ready', isReady);
    await changeSpec(ac, { restartedAt: '2030-01-02T03:04:05Z' });
    const second = await applyUntil(ac, context, 'ready after redeploy', isReady);
    expect(second.sandboxId).not.toBe(first.sandboxId);
    expect((await podsOf('redeployed')).map((pod) => pod.metadata.name)).toEqual([second.sandboxId]);
    const [pod] = await podsOf('redeployed');
    expect(pod?.spec.volumes).toEqual([
      { name: 'code', persistentVolumeClaim: { claimName: 'redeployed-disk' } },
    ]);
  });

  it('replaces the pod when the image changes', async () => {
    const { ac, context } = await agentComputer('reimaged');
    await applyUntil(ac, context, 'ready', isReady);
    const [before] = await podsOf('reimaged');
    await changeSpec(ac, { resources: { image: 'registry.invalid/agentry-runner:v2' } });
    await applyUntil(ac, context, 'ready on the new image', isReady);
    const [after] = await podsOf('reimaged');
    expect(after?.spec.containers[0]?.image).toBe('registry.invalid/agentry-runner:v2');
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
  });

  it('grows the disk when spec.resources.disk grows and the storage class allows expansion', async () => {
    const storageClass = `expandable-${namespace}`;
    await store.create(StorageClassType, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: storageClass },
      provisioner: 'agentry.dev/test-none',
      allowVolumeExpansion: true,
    });
    const expanding = new PodRuntime({ ...runtimeOptions, storageClassName: storageClass });
    const { ac, context } = await agentComputer('growing', { resources: { disk: '5Gi' } }, storageClass);
    await applyUntil(ac, context, 'ready', isReady, expanding);
    await changeSpec(ac, { resources: { disk: '8Gi' } });
    await applyUntil(ac, context, 'ready', isReady, expanding);
    const pvc = await store.get(PersistentVolumeClaimType, namespace, 'growing-disk');
    expect(pvc?.spec.resources?.requests?.storage).toBe('8Gi');
    await store.delete(StorageClassType, undefined, storageClass);
  });

  it('keeps the workload running on its disk when the disk cannot grow', async () => {
    const { ac, context } = await agentComputer('static', { resources: { disk: '5Gi' } });
    await applyUntil(ac, context, 'ready', isReady);
    await changeSpec(ac, { resources: { disk: '8Gi' } });
    const observation = await runtime.apply(
      (await store.get(AgentComputerType, namespace, 'static')) ?? ac,
      context,
      signal,
    );
    expect(observation.ready).toBe(true);
    const pvc = await store.get(PersistentVolumeClaimType, namespace, 'static-disk');
    expect(pvc?.spec.resources?.requests?.storage).toBe('5Gi');
  });

  it('never shrinks the disk', async () => {
    const { ac, context } = await agentComputer('shrunk', { resources: { disk: '5Gi' } });
    await applyUntil(ac, context, 'ready', isReady);
    await changeSpec(ac, { resources: { disk: '1Gi' } });
    await applyUntil(ac, context, 'ready', isReady);
    const pvc = await store.get(PersistentVolumeClaimType, namespace, 'shrunk-disk');
    expect(pvc?.spec.resources?.requests?.storage).toBe('5Gi');
  });

  it('reports a pod no node can take as a provision error naming the shortage', async () => {
    const { ac, context } = await agentComputer('huge', { resources: { cpu: '1000' } });
    const failed = await applyUntil(ac, context, 'unschedulable', (o) => o.provisionError !== undefined);
    expect(failed.reason).toBe('ProvisionFailed');
    expect(failed.provisionError).toMatch(/^Pod cannot be scheduled: .*Insufficient cpu/);
  });

  it('names the Service ac-<name>-runner when the name starts with a digit, as Service names must not', async () => {
    const { ac, context } = await agentComputer('7f3e9c1a-runner-test');
    const observation = await applyUntil(ac, context, 'provisioned', (o) => o.provisioned);
    expect(observation.endpoint).toBe(
      `http://ac-7f3e9c1a-runner-test-runner.${namespace}.svc:${RUNNER_PORT}`,
    );
    expect(await store.get(ServiceType, namespace, 'ac-7f3e9c1a-runner-test-runner')).toBeDefined();
  });
});

describe('removal', () => {
  const gone = async (name: string): Promise<boolean> =>
    (await podsOf(name)).length === 0 &&
    (await store.get(PersistentVolumeClaimType, namespace, `${name}-disk`)) === undefined &&
    (await store.get(ServiceType, namespace, `${name}-runner`)) === undefined &&
    (await store.get(NetworkPolicyType, namespace, `${name}-runner`)) === undefined;

  it('leaves garbage collection everything once the AgentComputer is deleted', async () => {
    const { ac, context } = await agentComputer('collected');
    await applyUntil(ac, context, 'ready', isReady);
    await store.delete(AgentComputerType, namespace, 'collected');
    await eventually('collected', async () => ((await gone('collected')) ? true : undefined), 45_000);
  });

  it('deletes what it made on remove(), and a second remove() is harmless', async () => {
    const { ac, context } = await agentComputer('removed');
    await applyUntil(ac, context, 'ready', isReady);
    await runtime.remove(ac);
    await runtime.remove(ac);
    await eventually('removed', async () => ((await gone('removed')) ? true : undefined));
  });
});
