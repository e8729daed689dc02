// The operator in-process on a real kube-apiserver with the pod runtime as its default, driven
// through the REST API: KWOK nodes run the pods, kube-controller-manager binds volumes and collects
// garbage, the operator's finalizer holds deletion until the workload is removed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SecretType, secretValue } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { WORKLOAD_FINALIZER } from '../../operator/agent-computer/reconciler.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
} from '../../operator/runtimes/kube-objects.js';
import { serviceName } from '../../operator/runtimes/workload-names.js';
import type { Pod } from '../../operator/runtimes/kube-objects.js';
import { RUNNER_PORT } from '../../operator/runtimes/types.js';
import { CONTROL_NAMESPACE, call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import {
  POD_DEFAULTS,
  POD_IMAGE,
  TestVolumes,
  changeSpec,
  controllerOf,
  createThroughApi,
  deleteAgentComputers,
  deleteNamespace,
  postAction,
  requireAgentComputer,
  restRecord,
  startTestOperator,
  untilRestStatus,
  expectNothingLeft,
} from './operator-support.js';
import type { TestOperator } from './operator-support.js';
import { clusterStore, eventually } from './support.js';

const READY_MS = 90_000;
const GC_MS = 150_000;
const org = `op-pod-${randomBytes(3).toString('hex')}`;
const namespace = `agentry-org-${org}`;
const store = clusterStore();
const volumes = new TestVolumes(store);
let api: TestApi;
let operator: TestOperator;
let key: string;

beforeAll(async () => {
  api = await startTestApi({ store: clusterStore(), createNamespaces: true });
  key = await api.key({ org });
  operator = await startTestOperator({
    runtime: 'pod',
    scope: { namespaces: new Set([namespace]), organizations: new Set([org]) },
  });
}, 60_000);

afterAll(async () => {
  try {
    await deleteAgentComputers(store, namespace);
  } finally {
    await operator.stop();
    await api.stop();
    await deleteNamespace(store, namespace, org);
    await volumes.deleteAll();
    await store.close();
  }
}, 180_000);

/** POST /v1/agent-computers, and the volume its disk will claim. */
async function created(name: string): Promise<string> {
  const record = await createThroughApi(api, key, name);
  await volumes.forDisk(namespace, record.id);
  return record.id;
}

const podsOf = async (id: string): Promise<Pod[]> =>
  (await store.list(PodType, { namespace, labelSelector: `agentry.dev/agent-computer=${id}` })).items;

async function onlyPod(id: string): Promise<Pod> {
  const pods = await podsOf(id);
  if (pods.length !== 1) throw new Error(`${pods.length} pods for ${id}`);
  const [pod] = pods;
  if (pod === undefined) throw new Error(`no pod for ${id}`);
  return pod;
}

describe('an agent computer created through the API on the pod runtime', () => {
  let id: string;
  let ac: AgentComputer;

  beforeAll(async () => {
    id = await created('pod box');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    ac = await requireAgentComputer(store, namespace, id);
  }, READY_MS + 10_000);

  it('becomes ready through KWOK, its pod as the sandbox', async () => {
    const record = await restRecord(api, key, id);
    expect(record).toMatchObject({ status: 'ready', provisionError: null, name: 'pod box' });
    expect(record.sandboxId).toBe((await onlyPod(id)).metadata.name);
  });

  it('holds deletion with the workload finalizer', () => {
    expect(ac.metadata.finalizers).toContain(WORKLOAD_FINALIZER);
  });

  it('claims a ReadWriteOnce disk of the default size, controlled by the AgentComputer', async () => {
    const pvc = await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`);
    expect(pvc?.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(pvc?.spec.resources?.requests?.storage).toBe(POD_DEFAULTS.disk);
    expect(pvc?.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('runs one pod without a service-account token, on the disk, controlled by the AgentComputer', async () => {
    const pod = await onlyPod(id);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.volumes).toEqual([{ name: 'code', persistentVolumeClaim: { claimName: `${id}-disk` } }]);
    expect(pod.spec.containers[0]?.image).toBe(POD_IMAGE);
    expect(pod.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('passes the runner token from the Secret <id>-runner-token by reference', async () => {
    const pod = await onlyPod(id);
    expect(pod.spec.containers[0]?.env).toContainEqual({
      name: 'AGENTRY_RUNNER_TOKEN',
      valueFrom: { secretKeyRef: { name: `${id}-runner-token`, key: 'token' } },
    });
  });

  it('keeps the runner token in a Secret controlled by the AgentComputer', async () => {
    const secret = await store.get(SecretType, namespace, `${id}-runner-token`);
    expect(secret?.type).toBe('agentry.dev/runner-token');
    expect(secret?.metadata.ownerReferences).toEqual(controllerOf(ac));
    const token = secret === undefined ? undefined : secretValue(secret, 'token');
    expect(token?.length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(ac)).not.toContain(token);
  });

  it('serves the runner port through a Service controlled by the AgentComputer', async () => {
    const service = await store.get(ServiceType, namespace, serviceName(id, 'runner'));
    expect(service?.spec.ports).toMatchObject([{ port: RUNNER_PORT, targetPort: RUNNER_PORT }]);
    expect(service?.spec.selector?.['agentry.dev/agent-computer']).toBe(id);
    expect(service?.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('fences the pod with a NetworkPolicy admitting the control plane on the runner port, the API server on the others', async () => {
    const policy = await store.get(NetworkPolicyType, namespace, `${id}-runner`);
    expect(policy?.spec.podSelector.matchLabels?.['agentry.dev/agent-computer']).toBe(id);
    expect(policy?.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy?.spec.ingress).toMatchObject([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': CONTROL_NAMESPACE } } }],
        ports: [{ protocol: 'TCP', port: RUNNER_PORT }],
      },
      {
        from: [
          {
            podSelector: {
              matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['agentry-api'] }],
            },
          },
        ],
      },
    ]);
    expect(policy?.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('records where the runner listens in the status, never in the REST record', async () => {
    const current = await requireAgentComputer(store, namespace, id);
    expect(current.status?.endpoint).toBe(
      `http://${serviceName(id, 'runner')}.${namespace}.svc:${RUNNER_PORT}`,
    );
    expect(JSON.stringify(await restRecord(api, key, id))).not.toContain('svc');
  });
});

describe('the life of an agent computer on the pod runtime', () => {
  it('hibernates on POST /stop: the pod is gone, the disk is kept', async () => {
    const id = await created('sleeper');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const disk = await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`);
    expect(await postAction(api, key, id, 'stop')).toBe(202);
    await untilRestStatus(api, key, id, 'hibernated', READY_MS);
    expect(await podsOf(id)).toEqual([]);
    const kept = await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`);
    expect(kept?.metadata.uid).toBe(disk?.metadata.uid);
  }, 200_000);

  it('resumes on POST /start with a pod on the same disk', async () => {
    const id = await created('riser');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const disk = await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`);
    expect(await postAction(api, key, id, 'stop')).toBe(202);
    await untilRestStatus(api, key, id, 'hibernated', READY_MS);
    expect(await postAction(api, key, id, 'start')).toBe(202);
    const resumed = await untilRestStatus(api, key, id, 'ready', READY_MS);
    const pod = await onlyPod(id);
    expect(resumed.sandboxId).toBe(pod.metadata.name);
    expect(pod.spec.volumes).toEqual([{ name: 'code', persistentVolumeClaim: { claimName: `${id}-disk` } }]);
    expect((await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`))?.metadata.uid).toBe(
      disk?.metadata.uid,
    );
  }, 300_000);

  it('redeploys a new pod on the same disk when spec.restartedAt changes, and is ready again', async () => {
    const id = await created('redeployed');
    const before = await untilRestStatus(api, key, id, 'ready', READY_MS);
    const first = await onlyPod(id);
    const disk = await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`);
    await changeSpec(store, namespace, id, { restartedAt: '2030-01-02T03:04:05Z' });
    const after = await eventually(
      'ready on a new pod',
      async () => {
        const record = await restRecord(api, key, id);
        return record.status === 'ready' && record.sandboxId !== before.sandboxId ? record : undefined;
      },
      READY_MS,
    );
    const second = await onlyPod(id);
    expect(second.metadata.name).not.toBe(first.metadata.name);
    expect(after.sandboxId).toBe(second.metadata.name);
    expect(second.spec.volumes).toEqual([
      { name: 'code', persistentVolumeClaim: { claimName: `${id}-disk` } },
    ]);
    expect((await store.get(PersistentVolumeClaimType, namespace, `${id}-disk`))?.metadata.uid).toBe(
      disk?.metadata.uid,
    );
  }, 200_000);

  it('leaves nothing behind after DELETE: pod, Service, disk, Secrets, NetworkPolicy, resource', async () => {
    const id = await created('goner');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    expect((await call(api, `/v1/agent-computers/${id}`, { key, method: 'DELETE' })).status).toBe(204);
    await expectNothingLeft(api, key, store, namespace, id, GC_MS);
  }, 300_000);
});
