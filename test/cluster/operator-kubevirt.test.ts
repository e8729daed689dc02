// The operator in-process on a real kube-apiserver with the kubevirt runtime as its default, driven
// through the REST API: KWOK stages play KubeVirt's virt-controller (runStrategy Always → Running
// and ready, Halted → Stopped, a VM labelled agentry_fail=<status> fails that way).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SecretType, secretValue } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { WORKLOAD_FINALIZER } from '../../operator/agent-computer/reconciler.js';
import { NetworkPolicyType, ServiceType, VirtualMachineType } from '../../operator/runtimes/kube-objects.js';
import { serviceName } from '../../operator/runtimes/workload-names.js';
import type { VirtualMachine } from '../../operator/runtimes/kube-objects.js';
import { RUNNER_PORT } from '../../operator/runtimes/types.js';
import { call, startTestApi } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import {
  VM_DEFAULTS,
  VM_IMAGE,
  VM_STORAGE_CLASS,
  changeSpec,
  controllerOf,
  createAgentComputer,
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
const org = `op-vm-${randomBytes(3).toString('hex')}`;
const namespace = `agentry-org-${org}`;
const store = clusterStore();
let api: TestApi;
let operator: TestOperator;
let key: string;

beforeAll(async () => {
  api = await startTestApi({ store: clusterStore(), createNamespaces: true });
  key = await api.key({ org });
  operator = await startTestOperator({
    runtime: 'kubevirt',
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
    await store.close();
  }
}, 180_000);

async function vmOf(id: string): Promise<VirtualMachine> {
  const vm = await store.get(VirtualMachineType, namespace, id);
  if (vm === undefined) throw new Error(`no VirtualMachine ${id}`);
  return vm;
}

async function tokenOf(id: string): Promise<string> {
  const secret = await store.get(SecretType, namespace, `${id}-runner-token`);
  const token = secret === undefined ? undefined : secretValue(secret, 'token');
  if (token === undefined) throw new Error(`no runner token for ${id}`);
  return token;
}

describe('an agent computer created through the API on the kubevirt runtime', () => {
  let id: string;
  let ac: AgentComputer;

  beforeAll(async () => {
    id = (await createThroughApi(api, key, 'vm box')).id;
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    ac = await requireAgentComputer(store, namespace, id);
  }, READY_MS + 10_000);

  it('becomes ready through the fake virt-controller, its VM as the sandbox', async () => {
    const record = await restRecord(api, key, id);
    expect(record).toMatchObject({ status: 'ready', sandboxId: id, provisionError: null, name: 'vm box' });
  });

  it('holds deletion with the workload finalizer', () => {
    expect(ac.metadata.finalizers).toContain(WORKLOAD_FINALIZER);
  });

  it('runs a VirtualMachine (runStrategy Always) controlled by the AgentComputer', async () => {
    const vm = await vmOf(id);
    expect(vm.spec.runStrategy).toBe('Always');
    expect(vm.status?.printableStatus).toBe('Running');
    expect(vm.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('boots from a DataVolume template of the default disk size, imported from the default image', async () => {
    const vm = await vmOf(id);
    expect(vm.spec.dataVolumeTemplates).toMatchObject([
      {
        metadata: { name: `${id}-disk` },
        spec: {
          storage: {
            resources: { requests: { storage: VM_DEFAULTS.disk } },
            storageClassName: VM_STORAGE_CLASS,
          },
          source: { registry: { url: `docker://${VM_IMAGE}` } },
        },
      },
    ]);
    expect(vm.spec.template?.spec).toMatchObject({
      volumes: expect.arrayContaining([{ name: 'rootdisk', dataVolume: { name: `${id}-disk` } }]),
    });
  });

  it('reads cloud-init from the Secret <id>-cloud-init by reference, the token nowhere in the VM', async () => {
    const vm = await vmOf(id);
    expect(vm.spec.template?.spec).toMatchObject({
      volumes: expect.arrayContaining([
        { name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: `${id}-cloud-init` } } },
      ]),
    });
    expect(JSON.stringify(vm)).not.toContain(await tokenOf(id));
  });

  it("puts the runner token Secret's token into the cloud-init Secret, controlled by the AgentComputer", async () => {
    const secret = await store.get(SecretType, namespace, `${id}-cloud-init`);
    expect(secret?.metadata.ownerReferences).toEqual(controllerOf(ac));
    const userdata = secret === undefined ? undefined : secretValue(secret, 'userdata');
    expect(userdata).toContain(`AGENTRY_RUNNER_TOKEN=${await tokenOf(id)}\n`);
  });

  it('keeps the runner token in the Secret <id>-runner-token controlled by the AgentComputer', async () => {
    const secret = await store.get(SecretType, namespace, `${id}-runner-token`);
    expect(secret?.type).toBe('agentry.dev/runner-token');
    expect(secret?.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('serves the runner port through a Service controlled by the AgentComputer', async () => {
    const service = await store.get(ServiceType, namespace, serviceName(id, 'runner'));
    expect(service?.spec.ports).toMatchObject([{ port: RUNNER_PORT, targetPort: RUNNER_PORT }]);
    expect(service?.metadata.ownerReferences).toEqual(controllerOf(ac));
  });

  it('fences the VM with a NetworkPolicy on the runner port, controlled by the AgentComputer', async () => {
    const policy = await store.get(NetworkPolicyType, namespace, `${id}-runner`);
    expect(policy?.spec.podSelector.matchLabels?.['agentry.dev/agent-computer']).toBe(id);
    expect(policy?.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy?.spec.ingress).toMatchObject([
      { ports: [{ protocol: 'TCP', port: RUNNER_PORT }] },
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
});

describe('the life of an agent computer on the kubevirt runtime', () => {
  it('hibernates on POST /stop: the VM is halted and Stopped, the VM and its disk template kept', async () => {
    const { id } = await createThroughApi(api, key, 'sleeper');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const before = await vmOf(id);
    expect(await postAction(api, key, id, 'stop')).toBe(202);
    await untilRestStatus(api, key, id, 'hibernated', READY_MS);
    const vm = await vmOf(id);
    expect(vm.spec.runStrategy).toBe('Halted');
    expect(vm.status?.printableStatus).toBe('Stopped');
    expect(vm.metadata.uid).toBe(before.metadata.uid);
    expect(vm.spec.dataVolumeTemplates).toEqual(before.spec.dataVolumeTemplates);
  }, 200_000);

  it('resumes on POST /start: the same VM runs again', async () => {
    const { id } = await createThroughApi(api, key, 'riser');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const before = await vmOf(id);
    expect(await postAction(api, key, id, 'stop')).toBe(202);
    await untilRestStatus(api, key, id, 'hibernated', READY_MS);
    expect(await postAction(api, key, id, 'start')).toBe(202);
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const vm = await vmOf(id);
    expect(vm.spec.runStrategy).toBe('Always');
    expect(vm.status?.printableStatus).toBe('Running');
    expect(vm.metadata.uid).toBe(before.metadata.uid);
  }, 300_000);

  it('redeploys on a spec.restartedAt change by cycling the VM (Halted, Stopped, Always) on the same disk', async () => {
    const { id } = await createThroughApi(api, key, 'cycled');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    const before = await vmOf(id);
    const seen: string[] = [];
    const abort = new AbortController();
    await store.watch(
      VirtualMachineType,
      { namespace, resourceVersion: before.metadata.resourceVersion ?? '', signal: abort.signal },
      (event) => {
        if (event.type === 'BOOKMARK' || event.object.metadata.name !== id) return;
        seen.push(`${event.object.spec.runStrategy ?? ''}/${event.object.status?.printableStatus ?? ''}`);
      },
    );
    const restartedAt = '2030-02-03T04:05:06Z';
    try {
      await changeSpec(store, namespace, id, { restartedAt });
      await eventually(
        'ready on the new template',
        async () => {
          const vm = await vmOf(id);
          const started =
            vm.spec.template?.metadata?.annotations?.['agentry.dev/restarted-at'] === restartedAt;
          const record = await restRecord(api, key, id);
          return started && vm.status?.printableStatus === 'Running' && record.status === 'ready'
            ? true
            : undefined;
        },
        READY_MS,
      );
    } finally {
      abort.abort();
    }
    expect(seen).toContain('Halted/Stopped');
    expect(seen.at(-1)).toBe('Always/Running');
    const vm = await vmOf(id);
    expect(vm.metadata.uid).toBe(before.metadata.uid);
    expect(vm.metadata.annotations?.['agentry.dev/redeploying']).toBeUndefined();
    expect(vm.spec.dataVolumeTemplates).toEqual(before.spec.dataVolumeTemplates);
  }, 200_000);

  it('reports a VM that cannot pull its image as status error with a provisionError naming ErrImagePull', async () => {
    const broken = await createAgentComputer(store, namespace, { labels: { agentry_fail: 'ErrImagePull' } });
    const id = broken.metadata.name;
    await eventually('known to the API', async () =>
      (await call(api, `/v1/agent-computers/${id}`, { key })).status === 200 ? true : undefined,
    );
    const record = await untilRestStatus(api, key, id, 'error', READY_MS);
    expect(record.provisionError).toContain('ErrImagePull');
    expect(record.provisionError).toContain(VM_IMAGE);
    expect((await vmOf(id)).metadata.labels?.agentry_fail).toBe('ErrImagePull');
  }, 200_000);

  it('leaves nothing behind after DELETE: VM, Secrets, Service, NetworkPolicy, resource', async () => {
    const { id } = await createThroughApi(api, key, 'goner');
    await untilRestStatus(api, key, id, 'ready', READY_MS);
    expect((await call(api, `/v1/agent-computers/${id}`, { key, method: 'DELETE' })).status).toBe(204);
    await expectNothingLeft(api, key, store, namespace, id, GC_MS);
  }, 300_000);
});
