// examples/ as a GitOps user applies it: one `kubectl apply -f examples/` on a cluster without the
// organization's namespace succeeds the first time (docs/adr/0006-gitops-namespace-first.md), and
// the operator, run in-process, brings every object to health as our Argo CD health checks judge it.
// KWOK's fake nodes mark pods Running without running a container, and a fake virt-controller (KWOK
// stages) plays KubeVirt, so this proves the objects the operator makes, not a running runner.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { Registry } from 'prom-client';
import {
  AgentComputerType,
  ContextLakeType,
  NamespaceType,
  OrganizationType,
  SecretType,
  TaskType,
  WebhookType,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { KubeObject, ResourceType, Runtime } from '../../crds/index.js';
import { DEFAULT_POLICY_NAME } from '../../operator/organization/reconciler.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import { NetworkPolicyType, VirtualMachineType } from '../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime } from '../../operator/runtimes/kubevirt.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import {
  POD_DEFAULTS,
  POD_IMAGE,
  ScopedStore,
  TestVolumes,
  VM_DEFAULTS,
  VM_IMAGE,
  deleteAgentComputers,
  workloadObjects,
} from './operator-support.js';
import { argoHealth } from '../support/argocd-health.js';
import type { ArgoHealth } from '../support/argocd-health.js';
import { clusterStore, eventually, kubectl } from './support.js';

const EXAMPLES = 'examples';
// The names the examples use (they are what a GitOps user applies, so the test does not rename them).
const ORG = 'acme';
const ORG_NAMESPACE = 'agentry-org-acme';
const POD_COMPUTER = '5b0e7c0e-2f43-4c55-9a59-2f1d0c1f6a01';
const VM_COMPUTER = '9c4b6a3e-7d1f-4e2a-8b5c-3a6d9e0f1b02';
const WEBHOOK = '3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a03';

const store = clusterStore();
const control = `examples-${randomBytes(3).toString('hex')}`;
const volumes = new TestVolumes(store);
let operator: RunningOperator | undefined;
let operatorStore: ScopedStore | undefined;

async function exampleFiles(): Promise<string[]> {
  return (await readdir(EXAMPLES)).filter((name) => name.endsWith('.yaml')).sort();
}

/** Waits until our Argo CD health check says `status` of an object, and returns that health. */
const untilHealth = <T extends KubeObject>(
  type: ResourceType<T>,
  namespace: string | undefined,
  name: string,
  status: ArgoHealth['status'],
): Promise<ArgoHealth> =>
  eventually(
    `${type.kind} ${name} ${status}`,
    async () => {
      const object = await store.get(type, namespace, name);
      const health = object === undefined ? undefined : await argoHealth(type.kind, object);
      return health?.status === status ? health : undefined;
    },
    60_000,
  );

beforeAll(async () => {
  await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: control } });
  // The cluster has no volume provisioner: a volume waits for the pod agent computer's disk claim.
  await volumes.forDisk(ORG_NAMESPACE, POD_COMPUTER);
  operatorStore = new ScopedStore(clusterStore(), {
    namespaces: new Set([ORG_NAMESPACE, control]),
    organizations: new Set([ORG]),
  });
  const logger = createLogger({ level: 'silent' });
  const common = { store: operatorStore, controlNamespace: control, logger };
  const runtimes = new Map<Runtime, WorkloadRuntime>([
    ['pod', new PodRuntime({ ...common, defaultImage: POD_IMAGE, defaults: POD_DEFAULTS })],
    ['kubevirt', new KubevirtRuntime({ ...common, defaultImage: VM_IMAGE, defaults: VM_DEFAULTS })],
  ]);
  operator = await startOperator({
    ...common,
    registry: new Registry(),
    runtimes,
    defaultRuntime: 'pod',
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    webhooks: { publicUrl: 'http://agentry.test', allowPrivateTargets: false },
  });
}, 120_000);

afterAll(async () => {
  // The pool first, or it would make new members as the old ones go.
  await store.delete(WorkspacePoolType, ORG_NAMESPACE, 'default').catch(() => undefined);
  // Finalizers are released by the operator: delete what carries one while it still runs.
  await deleteAgentComputers(store, ORG_NAMESPACE).catch(() => undefined);
  await store.delete(ContextLakeType, ORG_NAMESPACE, 'context-lake').catch(() => undefined);
  await eventually(
    'context lake gone',
    async () =>
      (await store.get(ContextLakeType, ORG_NAMESPACE, 'context-lake')) === undefined ? true : undefined,
    60_000,
  ).catch(() => undefined);
  await operator?.stop();
  await operatorStore?.close();
  await store.delete(OrganizationType, undefined, ORG).catch(() => undefined);
  for (const name of [ORG_NAMESPACE, control])
    await store.delete(NamespaceType, undefined, name).catch(() => undefined);
  await volumes.deleteAll();
  await store.close();
}, 180_000);

describe('examples/', () => {
  it('holds the namespace first, then the organization, both agent computers, the context lake, the webhook and a warm pool', async () => {
    expect(await exampleFiles()).toEqual([
      '00-namespace.yaml',
      'agent-computer-kubevirt.yaml',
      'agent-computer-pod.yaml',
      'context-lake.yaml',
      'organization.yaml',
      'webhook.yaml',
      'workspace-pool.yaml',
    ]);
  });

  it('one kubectl apply -f examples/ succeeds the first time on a cluster without the namespace or the organization', async () => {
    expect(await store.get(NamespaceType, undefined, ORG_NAMESPACE)).toBeUndefined();
    expect(await store.get(OrganizationType, undefined, ORG)).toBeUndefined();
    // kubectl exits non-zero (and this rejects) if any object is refused.
    const output = await kubectl(['apply', '-f', `${EXAMPLES}/`]);
    expect(output.trim().split('\n').sort()).toEqual(
      [
        `namespace/${ORG_NAMESPACE} created`,
        `agentcomputer.agentry.dev/${VM_COMPUTER} created`,
        `agentcomputer.agentry.dev/${POD_COMPUTER} created`,
        'secret/context-lake-credentials created',
        'contextlake.agentry.dev/context-lake created',
        `organization.agentry.dev/${ORG} created`,
        'secret/ci-notifications-secret created',
        `webhook.agentry.dev/${WEBHOOK} created`,
        'workspacepool.agentry.dev/default created',
      ].sort(),
    );
  }, 90_000);

  it("the operator adopts the examples' namespace: its labels and default-deny policy, no owner reference", async () => {
    await untilHealth(OrganizationType, undefined, ORG, 'Healthy');
    const namespace = await store.get(NamespaceType, undefined, ORG_NAMESPACE);
    expect(namespace?.metadata.labels).toMatchObject({
      'agentry.dev/organization': ORG,
      'app.kubernetes.io/managed-by': 'agentry',
    });
    expect(namespace?.metadata.ownerReferences ?? []).toEqual([]);
    expect(await store.get(NetworkPolicyType, ORG_NAMESPACE, DEFAULT_POLICY_NAME)).toBeDefined();
  }, 90_000);

  // The agent computers were applied before the Organization (name order): they converge anyway.
  it.each([
    ['agent computer (pod)', 'Healthy', AgentComputerType, POD_COMPUTER],
    ['agent computer (kubevirt)', 'Healthy', AgentComputerType, VM_COMPUTER],
    ['webhook', 'Healthy', WebhookType, WEBHOOK],
    ['context lake (hibernated)', 'Suspended', ContextLakeType, 'context-lake'],
    ['warm pool (kubevirt members)', 'Healthy', WorkspacePoolType, 'default'],
  ] as const)(
    'the %s becomes %s by our Argo CD health check',
    async (_what, status, type, name) => {
      await untilHealth<KubeObject>(type, ORG_NAMESPACE, name, status);
    },
    90_000,
  );

  it('the pod agent computer gets its Pod, disk, Service, token Secret and NetworkPolicy', async () => {
    const objects = await eventually(
      'pod workload',
      async () => {
        const found = await workloadObjects(store, ORG_NAMESPACE, POD_COMPUTER);
        return found.Pod?.length === 1 && found.Service?.length === 1 ? found : undefined;
      },
      60_000,
    );
    expect(objects).toMatchObject({
      Pod: [expect.any(String)],
      PersistentVolumeClaim: [expect.any(String)],
      Service: [expect.any(String)],
      Secret: [expect.any(String)],
      NetworkPolicy: [expect.any(String)],
      VirtualMachine: [],
    });
  }, 90_000);

  it('the kubevirt agent computer gets a VirtualMachine (started by the fake virt-controller) with its disk image', async () => {
    const vm = await eventually(
      'running VM',
      async () => {
        const found = await workloadObjects(store, ORG_NAMESPACE, VM_COMPUTER);
        const name = found.VirtualMachine?.[0];
        const current =
          name === undefined ? undefined : await store.get(VirtualMachineType, ORG_NAMESPACE, name);
        return current?.status?.printableStatus === 'Running' ? current : undefined;
      },
      60_000,
    );
    expect(vm.spec.runStrategy).toBe('Always');
    expect(JSON.stringify(vm.spec.dataVolumeTemplates)).toContain(
      'docker://ghcr.io/agentry-dev/agentry-runner-disk:0.1.0',
    );
    const objects = await workloadObjects(store, ORG_NAMESPACE, VM_COMPUTER);
    expect(objects.Pod).toEqual([]);
    expect(objects.Secret).toHaveLength(2); // the runner token and the cloud-init userdata
  }, 90_000);

  it("the webhook gets delivery status once a task's transition is sent to it (hooks.example.com does not resolve here)", async () => {
    await store.create(TaskType, {
      apiVersion: apiVersionOf(TaskType),
      kind: 'Task',
      metadata: { name: randomUUID(), namespace: ORG_NAMESPACE },
      spec: {
        workspace: POD_COMPUTER,
        executor: 'shell',
        title: 'examples',
        owner: 'examples-test',
        visibility: 'shared',
        prompts: [{ id: randomUUID(), text: 'echo hello', submittedAt: new Date().toISOString() }],
      },
    });
    const webhook = await eventually(
      'webhook status',
      async () => {
        const current = await store.get(WebhookType, ORG_NAMESPACE, WEBHOOK);
        return (current?.status?.failureCount ?? 0) > 0 ? current : undefined;
      },
      90_000,
    );
    expect(webhook.status?.lastError).toEqual(expect.any(String));
    expect(webhook.status?.lastTriggeredAt).toEqual(expect.any(String));
  }, 120_000);

  it('the context lake keeps its credentials as ${secrets:...} references and, hibernated, is reconciled to not_provisioned', async () => {
    const params = (await store.get(ContextLakeType, ORG_NAMESPACE, 'context-lake'))?.spec.config.datasets[0]
      ?.params;
    expect(params).toMatchObject({
      s3_key: '${secrets:orders.s3_key}',
      s3_secret: '${secrets:orders.s3_secret}',
    });
    const secret = await store.get(SecretType, ORG_NAMESPACE, 'context-lake-credentials');
    expect(Object.keys(secret?.data ?? {}).sort()).toEqual(['orders.s3_key', 'orders.s3_secret']);
    // operatingMode Hibernated: nothing runs until the first query, and the status says so.
    const lake = await eventually(
      'context lake status',
      async () => {
        const current = await store.get(ContextLakeType, ORG_NAMESPACE, 'context-lake');
        return current?.status?.vmStatus === undefined ? undefined : current;
      },
      60_000,
    );
    expect(lake.status?.vmStatus).toBe('not_provisioned');
    expect(lake.status?.observedGeneration).toBe(lake.metadata.generation);
  }, 90_000);

  it('deleting the organization leaves the namespace it adopted, and what is in it; its policy goes with it', async () => {
    await store.delete(OrganizationType, undefined, ORG);
    await eventually(
      'default-deny policy collected',
      async () =>
        (await store.get(NetworkPolicyType, ORG_NAMESPACE, DEFAULT_POLICY_NAME)) === undefined
          ? true
          : undefined,
      60_000,
    );
    const namespace = await store.get(NamespaceType, undefined, ORG_NAMESPACE);
    expect(namespace?.metadata.deletionTimestamp).toBeUndefined();
    expect(await store.get(AgentComputerType, ORG_NAMESPACE, POD_COMPUTER)).toBeDefined();
  }, 90_000);
});
