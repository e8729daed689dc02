// The ContextLake reconciler in-process on a real kube-apiserver with the pod and kubevirt runtimes:
// it makes the lake's Pod, PVC, Service and NetworkPolicy (or VirtualMachine and cloud-init Secret)
// with owner references and without service-account tokens, hibernates and removes them. KWOK's
// fake nodes and fake virt-controller report pods and VMs Running but run nothing, so the lake
// server itself never answers here: the lake stays `provisioning` with Ready False (Starting), which
// these tests check. The lake server's behaviour is covered by test/integration/context-lake-operator.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { Registry } from 'prom-client';
import {
  CONTEXT_LAKE_NAME,
  ContextLakeSpecSchema,
  ContextLakeType,
  SecretType,
  secretValue,
} from '../../crds/index.js';
import type { ContextLake, ContextLakeSpec, Runtime } from '../../crds/index.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import { LAKE_WORKLOAD_FINALIZER } from '../../operator/context-lake/reconciler.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from '../../operator/runtimes/kube-objects.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime } from '../../operator/runtimes/kubevirt.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import { LAKE_PORT } from '../../operator/runtimes/types.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import { CONTROL_NAMESPACE } from '../support/api-server.js';
import {
  POD_DEFAULTS,
  ScopedStore,
  TestVolumes,
  VM_DEFAULTS,
  VM_STORAGE_CLASS,
  deleteNamespace,
} from './operator-support.js';
import { clusterStore, createTestNamespace, eventually } from './support.js';

const LAKE_IMAGE = 'registry.invalid/agentry-lake:test';
const WAIT_MS = 90_000;
const store = clusterStore();
const volumes = new TestVolumes(store);
const installationKey = new InstallationKey(randomBytes(32));
let podNamespace: string;
let vmNamespace: string;
let operatorStore: ScopedStore;
let operator: RunningOperator;

beforeAll(async () => {
  podNamespace = await createTestNamespace(store, 'lake-pod');
  vmNamespace = await createTestNamespace(store, 'lake-vm');
  operatorStore = new ScopedStore(clusterStore(), {
    namespaces: new Set([podNamespace, vmNamespace]),
    organizations: new Set(),
  });
  const logger = createLogger({ level: 'silent' });
  const common = { store: operatorStore, controlNamespace: CONTROL_NAMESPACE, logger };
  const lake = { image: LAKE_IMAGE, connectors: ['s3', 'https'] };
  const runtimes = new Map<Runtime, WorkloadRuntime>([
    [
      'pod',
      new PodRuntime({
        ...common,
        defaultImage: 'registry.invalid/agentry:test',
        defaults: POD_DEFAULTS,
        lake,
      }),
    ],
    [
      'kubevirt',
      new KubevirtRuntime({
        ...common,
        defaultImage: 'quay.io/containerdisks/agentry:test',
        defaults: VM_DEFAULTS,
        storageClassName: VM_STORAGE_CLASS,
        lake,
      }),
    ],
  ]);
  operator = await startOperator({
    store: operatorStore,
    logger,
    registry: new Registry(),
    runtimes,
    defaultRuntime: 'pod',
    controlNamespace: CONTROL_NAMESPACE,
    installationKey,
    executors: new ExecutorCatalog(),
    contextLakes: { busyPollMs: 500, runningPollMs: 2_000 },
  });
  // The cluster has no volume provisioner: a volume pre-bound to the lake's claim lets its pod schedule.
  await volumes.forDisk(podNamespace, `${CONTEXT_LAKE_NAME}-lake`);
}, 60_000);

afterAll(async () => {
  try {
    for (const namespace of [podNamespace, vmNamespace]) {
      await store.delete(ContextLakeType, namespace, CONTEXT_LAKE_NAME).catch(() => undefined);
      await eventually(
        'the lake is gone',
        async () =>
          (await store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME)) === undefined ? true : undefined,
        WAIT_MS,
      ).catch(() => undefined);
    }
  } finally {
    await operator.stop();
    await operatorStore.close();
    for (const namespace of [podNamespace, vmNamespace]) await deleteNamespace(store, namespace);
    await volumes.deleteAll();
    await store.close();
  }
}, 180_000);

function lakeSpec(runtime: Runtime, operatingMode: 'Running' | 'Hibernated'): ContextLakeSpec {
  return ContextLakeSpecSchema.parse({
    runtime,
    operatingMode,
    idleTimeout: '0s',
    resources: { cpu: '100m', memory: '128Mi', disk: '1Gi' },
    config: {
      name: 'sales',
      datasets: [{ name: 'orders', from: 's3://sales-bucket/orders.parquet', params: { s3_auth: 'public' } }],
    },
  });
}

async function lakeIn(namespace: string): Promise<ContextLake> {
  const lake = await store.get(ContextLakeType, namespace, CONTEXT_LAKE_NAME);
  if (lake === undefined) throw new Error(`no ContextLake in ${namespace}`);
  return lake;
}

async function setMode(namespace: string, operatingMode: 'Running' | 'Hibernated'): Promise<void> {
  for (;;) {
    const lake = await lakeIn(namespace);
    try {
      await store.replace(ContextLakeType, { ...lake, spec: { ...lake.spec, operatingMode } });
      return;
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
    }
  }
}

const untilLake = (
  namespace: string,
  what: string,
  check: (lake: ContextLake) => boolean,
): Promise<ContextLake> =>
  eventually(
    what,
    async () => {
      const lake = await lakeIn(namespace);
      return check(lake) ? lake : undefined;
    },
    WAIT_MS,
  );

const controllerOf = (lake: ContextLake): unknown => [
  {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'ContextLake',
    name: CONTEXT_LAKE_NAME,
    uid: lake.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  },
];

const lakePods = async (namespace: string): Promise<Pod[]> =>
  (await store.list(PodType, { namespace, labelSelector: `agentry.dev/context-lake=${CONTEXT_LAKE_NAME}` }))
    .items;

describe('a ContextLake on the pod runtime', () => {
  let lake: ContextLake;

  beforeAll(async () => {
    await store.create(ContextLakeType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'ContextLake',
      metadata: { name: CONTEXT_LAKE_NAME, namespace: podNamespace },
      spec: lakeSpec('pod', 'Hibernated'),
    });
  });

  it('makes nothing for a lake that was never started: not_provisioned, datasets unknown', async () => {
    lake = await untilLake(podNamespace, 'the lake is reported', (l) => l.status?.vmStatus !== undefined);
    expect(lake.status).toMatchObject({
      vmStatus: 'not_provisioned',
      datasets: { orders: { ok: false, status: 'unknown', connectorId: 's3', notifications: false } },
    });
    expect(lake.metadata.finalizers).toContain(LAKE_WORKLOAD_FINALIZER);
    expect(await lakePods(podNamespace)).toEqual([]);
    expect(
      await store.get(PersistentVolumeClaimType, podNamespace, 'context-lake-lake-disk'),
    ).toBeUndefined();
  });

  it(
    'starts a pod that KWOK runs; the lake server cannot answer there, so it stays provisioning',
    async () => {
      await setMode(podNamespace, 'Running');
      lake = await untilLake(
        podNamespace,
        'the pod is up and the lake server unreachable',
        (l) =>
          l.status?.conditions?.some((c) => c.type === 'Provisioned' && c.status === 'True') === true &&
          l.status.conditions.some(
            (c) => c.type === 'Ready' && c.reason === 'Starting' && /cannot be reached/.test(c.message),
          ),
      );
      expect(lake.status).toMatchObject({
        vmStatus: 'provisioning',
        endpoint: `http://context-lake-lake.${podNamespace}.svc:${LAKE_PORT}`,
        datasets: { orders: { ok: false, status: 'pending' } },
      });
    },
    WAIT_MS + 10_000,
  );

  it('runs the lake server in a pod without a service-account token, controlled by the ContextLake', async () => {
    const [pod, ...others] = await lakePods(podNamespace);
    expect(others).toEqual([]);
    expect(pod?.metadata.ownerReferences).toEqual(controllerOf(lake));
    expect(pod?.spec.automountServiceAccountToken).toBe(false);
    expect(pod?.spec.containers[0]).toMatchObject({
      name: 'lake',
      image: LAKE_IMAGE,
      command: ['agentry', 'lake'],
      ports: [{ containerPort: LAKE_PORT }],
      volumeMounts: [{ name: 'data', mountPath: '/var/lib/agentry-lake', subPath: 'lake' }],
      resources: { limits: { cpu: '100m', memory: '128Mi' } },
      env: expect.arrayContaining([
        {
          name: 'AGENTRY_LAKE_TOKEN',
          valueFrom: { secretKeyRef: { name: 'context-lake-lake-token', key: 'token' } },
        },
        { name: 'AGENTRY_LAKE_CONNECTORS', value: 's3,https' },
        { name: 'AGENTRY_LAKE_THREADS', value: '1' },
      ]),
    });
    expect(pod?.spec.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'context-lake-lake-disk' } },
    ]);
    expect(JSON.stringify(pod)).not.toContain(installationKey.runnerToken(lake));
  });

  it('keeps the token, disk, Service and NetworkPolicy as objects the ContextLake controls', async () => {
    const token = await store.get(SecretType, podNamespace, 'context-lake-lake-token');
    expect(token?.metadata.ownerReferences).toEqual(controllerOf(lake));
    expect(token === undefined ? undefined : secretValue(token, 'token')).toBe(
      installationKey.runnerToken(lake),
    );
    const pvc = await store.get(PersistentVolumeClaimType, podNamespace, 'context-lake-lake-disk');
    expect(pvc?.spec.resources?.requests?.storage).toBe('1Gi');
    expect(pvc?.metadata.ownerReferences).toEqual(controllerOf(lake));
    const service = await store.get(ServiceType, podNamespace, 'context-lake-lake');
    expect(service?.spec.ports).toMatchObject([{ port: LAKE_PORT, targetPort: LAKE_PORT }]);
    expect(service?.metadata.ownerReferences).toEqual(controllerOf(lake));
    const policy = await store.get(NetworkPolicyType, podNamespace, 'context-lake-lake');
    expect(policy?.spec.ingress).toMatchObject([{ ports: [{ protocol: 'TCP', port: LAKE_PORT }] }]);
    expect(policy?.metadata.ownerReferences).toEqual(controllerOf(lake));
  });

  it(
    'hibernates: the pod goes, the disk stays, vmStatus paused, datasets unknown',
    async () => {
      await setMode(podNamespace, 'Hibernated');
      await eventually(
        'the pod is gone',
        async () => ((await lakePods(podNamespace)).length === 0 ? true : undefined),
        WAIT_MS,
      );
      const paused = await untilLake(
        podNamespace,
        'the lake is paused',
        (l) => l.status?.vmStatus === 'paused',
      );
      expect(paused.status?.datasets?.orders?.status).toBe('unknown');
      expect(
        await store.get(PersistentVolumeClaimType, podNamespace, 'context-lake-lake-disk'),
      ).toBeDefined();
    },
    WAIT_MS + 10_000,
  );
});

describe('a ContextLake on the kubevirt runtime', () => {
  let lake: ContextLake;

  beforeAll(async () => {
    await store.create(ContextLakeType, {
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'ContextLake',
      metadata: { name: CONTEXT_LAKE_NAME, namespace: vmNamespace },
      spec: lakeSpec('kubevirt', 'Running'),
    });
    lake = await untilLake(
      vmNamespace,
      'the VM runs and the lake server is unreachable',
      (l) =>
        l.status?.conditions?.some((c) => c.type === 'Ready' && /cannot be reached/.test(c.message)) === true,
    );
  }, WAIT_MS + 10_000);

  it('runs a VirtualMachine <name>-lake controlled by the ContextLake, still provisioning', async () => {
    const vm = await store.get(VirtualMachineType, vmNamespace, 'context-lake-lake');
    expect(vm?.metadata.ownerReferences).toEqual(controllerOf(lake));
    expect(vm?.spec.runStrategy).toBe('Always');
    expect(vm?.spec.template?.metadata?.labels).toMatchObject({
      'agentry.dev/context-lake': CONTEXT_LAKE_NAME,
    });
    expect(JSON.stringify(vm)).not.toContain(installationKey.runnerToken(lake));
    expect(lake.status?.vmStatus).toBe('provisioning');
  });

  it('boots the lake server with cloud-init from a Secret: its token and an `agentry lake` unit', async () => {
    const secret = await store.get(SecretType, vmNamespace, 'context-lake-lake-cloud-init');
    expect(secret?.metadata.ownerReferences).toEqual(controllerOf(lake));
    const userdata = secret === undefined ? '' : (secretValue(secret, 'userdata') ?? '');
    const config: unknown = parse(userdata);
    expect(config).toMatchObject({
      write_files: [
        {
          path: '/etc/agentry/lake.env',
          permissions: '0600',
          content: expect.stringContaining(`AGENTRY_LAKE_TOKEN=${installationKey.runnerToken(lake)}\n`),
        },
        {
          path: '/etc/systemd/system/agentry-lake.service',
          content: expect.stringContaining('agentry lake'),
        },
      ],
    });
  });

  it('serves the lake port through a Service and fences it with a NetworkPolicy', async () => {
    const service = await store.get(ServiceType, vmNamespace, 'context-lake-lake');
    expect(service?.spec.ports).toMatchObject([{ port: LAKE_PORT, targetPort: LAKE_PORT }]);
    expect(service?.metadata.ownerReferences).toEqual(controllerOf(lake));
    const policy = await store.get(NetworkPolicyType, vmNamespace, 'context-lake-lake');
    expect(policy?.metadata.ownerReferences).toEqual(controllerOf(lake));
  });

  it(
    'hibernates by halting the VM: vmStatus paused',
    async () => {
      await setMode(vmNamespace, 'Hibernated');
      await untilLake(vmNamespace, 'the lake is paused', (l) => l.status?.vmStatus === 'paused');
      expect((await store.get(VirtualMachineType, vmNamespace, 'context-lake-lake'))?.spec.runStrategy).toBe(
        'Halted',
      );
    },
    WAIT_MS + 10_000,
  );

  it(
    'removes its workload when deleted: the finalizer holds deletion until the VM and Secrets are gone',
    async () => {
      await store.delete(ContextLakeType, vmNamespace, CONTEXT_LAKE_NAME);
      await eventually(
        'the lake is gone',
        async () =>
          (await store.get(ContextLakeType, vmNamespace, CONTEXT_LAKE_NAME)) === undefined ? true : undefined,
        WAIT_MS,
      );
      expect(await store.get(VirtualMachineType, vmNamespace, 'context-lake-lake')).toBeUndefined();
      expect(await store.get(SecretType, vmNamespace, 'context-lake-lake-token')).toBeUndefined();
    },
    WAIT_MS + 10_000,
  );
});
