// What the operator cluster tests share: an operator started in-process on a real kube-apiserver,
// seen through a scope so that it reconciles only its own test's namespaces (the cluster is shared
// by every test file, some of which drive runtimes by hand on AgentComputers of their own), the
// PersistentVolumes the cluster's missing provisioner would make, and polling helpers.
import { randomBytes } from 'node:crypto';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { AgentComputerRecordSchema } from '../../api/agent-computer/present.js';
import type { AgentComputerRecord } from '../../api/agent-computer/present.js';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  NamespaceType,
  OrganizationType,
  SecretType,
} from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec, ResourceType, Runtime } from '../../crds/index.js';
import type { LeaderElectionConfig } from '../../operator/controller/index.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from '../../operator/runtimes/kube-objects.js';
import { KubevirtRuntime } from '../../operator/runtimes/kubevirt.js';
import { PodRuntime } from '../../operator/runtimes/pod.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { createLogger } from '../../platform/log.js';
import type { LevelWithSilent } from 'pino';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { CONTROL_NAMESPACE, call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { clusterStore, eventually } from './support.js';
import { PersistentVolumeType } from './kube-test-types.js';
import { ScopedStore } from './scoped-store.js';
import type { OperatorScope } from './scoped-store.js';

export { ScopedStore } from './scoped-store.js';
export type { OperatorScope } from './scoped-store.js';

export const POD_IMAGE = 'registry.invalid/agentry-runner:test';
export const VM_IMAGE = 'quay.io/containerdisks/agentry-runner:test';
export const VM_STORAGE_CLASS = 'fast-ssd';
/** Small pods, so fifty fit on the two fake nodes next to other tests' workloads. */
export const POD_DEFAULTS = { cpu: '100m', memory: '128Mi', disk: '1Gi' };
export const VM_DEFAULTS = { cpu: '1', memory: '2Gi', disk: '20Gi' };

export interface TestOperator {
  operator: RunningOperator;
  /** The operator's own store (a connection of its own to the API server). */
  store: ScopedStore;
  registry: Registry;
  /** Graceful stop, then the store's connections are closed. Harmless twice. */
  stop(): Promise<void>;
  /** A crash: stops at once without releasing its lease. */
  kill(): Promise<void>;
}

/** AGENTRY_TEST_OPERATOR_LOG=debug shows the operators' logs while a test is being written. */
const logLevel = (): LevelWithSilent => {
  const level = process.env.AGENTRY_TEST_OPERATOR_LOG;
  const levels: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  return levels.find((l) => l === level) ?? 'silent';
};

function runtimeFor(kind: 'pod' | 'kubevirt', store: ResourceStore): WorkloadRuntime {
  const logger = createLogger({ level: logLevel() });
  if (kind === 'pod') {
    return new PodRuntime({
      store,
      controlNamespace: CONTROL_NAMESPACE,
      defaultImage: POD_IMAGE,
      defaults: POD_DEFAULTS,
      logger,
    });
  }
  return new KubevirtRuntime({
    store,
    controlNamespace: CONTROL_NAMESPACE,
    defaultImage: VM_IMAGE,
    defaults: VM_DEFAULTS,
    storageClassName: VM_STORAGE_CLASS,
    logger,
  });
}

/** Starts the operator in-process with `runtime` as its (only and default) runtime. */
export async function startTestOperator(options: {
  runtime: 'pod' | 'kubevirt';
  scope: OperatorScope;
  leaderElection?: LeaderElectionConfig;
  agentComputerWorkers?: number;
}): Promise<TestOperator> {
  const store = new ScopedStore(clusterStore(), options.scope);
  const registry = new Registry();
  const runtimes = new Map<Runtime, WorkloadRuntime>([[options.runtime, runtimeFor(options.runtime, store)]]);
  const operator = await startOperator({
    store,
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    logger: createLogger({ level: logLevel() }),
    registry,
    runtimes,
    defaultRuntime: options.runtime,
    ...(options.leaderElection === undefined ? {} : { leaderElection: options.leaderElection }),
    ...(options.agentComputerWorkers === undefined
      ? {}
      : { agentComputerWorkers: options.agentComputerWorkers }),
  });
  let closed: Promise<void> | undefined;
  const end = (how: () => Promise<void>): Promise<void> => {
    closed ??= how().finally(() => store.close());
    return closed;
  };
  return {
    operator,
    store,
    registry,
    stop: () => end(() => operator.stop()),
    kill: () => end(() => operator.manager.kill()),
  };
}

/** Volumes made for a test file's claims, deleted (they are cluster-scoped) by `deleteAll`. */
export class TestVolumes {
  private readonly names: string[] = [];

  constructor(private readonly store: ResourceStore) {}

  /** A volume pre-bound to the pod runtime's claim `<agentComputer>-disk` in `namespace`. */
  async forDisk(namespace: string, agentComputer: string): Promise<void> {
    const claim = `${agentComputer}-disk`;
    const name = `${namespace}-${claim}`;
    this.names.push(name);
    await this.store.create(PersistentVolumeType, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        hostPath: { path: `/tmp/agentry/${name}` },
        claimRef: { namespace, name: claim },
      },
    });
  }

  async deleteAll(): Promise<void> {
    for (const name of this.names.splice(0)) {
      await this.store.delete(PersistentVolumeType, undefined, name).catch(() => undefined);
    }
  }
}

/** An AgentComputer written straight to the store, as a GitOps user would; named by a UUID. */
export function createAgentComputer(
  store: ResourceStore,
  namespace: string,
  options: { name?: string; labels?: Record<string, string>; spec?: Partial<AgentComputerSpec> } = {},
): Promise<AgentComputer> {
  return store.create(AgentComputerType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name: options.name ?? randomUUID(), namespace, labels: options.labels ?? {} },
    spec: AgentComputerSpecSchema.parse(options.spec ?? {}),
  });
}

export async function requireAgentComputer(
  store: ResourceStore,
  namespace: string,
  name: string,
): Promise<AgentComputer> {
  const ac = await store.get(AgentComputerType, namespace, name);
  if (ac === undefined) throw new Error(`AgentComputer ${namespace}/${name} vanished`);
  return ac;
}

/** Changes the spec as `kubectl edit` would (retrying a conflict with the operator's writes). */
export async function changeSpec(
  store: ResourceStore,
  namespace: string,
  name: string,
  change: Partial<AgentComputerSpec>,
): Promise<AgentComputer> {
  return eventually(`spec of ${name} changed`, async () => {
    const current = await requireAgentComputer(store, namespace, name);
    return store
      .replace(AgentComputerType, { ...current, spec: { ...current.spec, ...change } })
      .catch((err: unknown) => {
        if (isStoreError(err, 'Conflict')) return undefined;
        throw err;
      });
  });
}

/** An agent computer as the REST API presents it, read over HTTP. */
export async function restRecord(api: TestApi, key: string, id: string): Promise<AgentComputerRecord> {
  const res = await call(api, `/v1/agent-computers/${id}`, { key });
  if (res.status !== 200) throw new Error(`GET /v1/agent-computers/${id}: ${res.status}`);
  return AgentComputerRecordSchema.parse(await res.json());
}

/** Polls the REST record until its status is `status`. */
export function untilRestStatus(
  api: TestApi,
  key: string,
  id: string,
  status: AgentComputerRecord['status'],
  timeoutMs = 60_000,
): Promise<AgentComputerRecord> {
  return eventually(
    `agent computer ${id} ${status}`,
    async () => {
      const record = await restRecord(api, key, id);
      return record.status === status ? record : undefined;
    },
    timeoutMs,
  );
}

/** POST /v1/agent-computers, answering the created record. */
export async function createThroughApi(
  api: TestApi,
  key: string,
  name: string,
): Promise<AgentComputerRecord> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name } });
  if (res.status !== 201) throw new Error(`POST /v1/agent-computers: ${res.status} ${await res.text()}`);
  return AgentComputerRecordSchema.parse(await res.json());
}

/** POST /v1/agent-computers/:id/<action>, answering the HTTP status. */
export async function postAction(
  api: TestApi,
  key: string,
  id: string,
  action: 'stop' | 'start',
): Promise<number> {
  return (await call(api, `/v1/agent-computers/${id}/${action}`, { key, method: 'POST' })).status;
}

/** Names of everything labelled as made for one agent computer, by kind. */
export async function workloadObjects(
  store: ResourceStore,
  namespace: string,
  agentComputer: string,
): Promise<Record<string, string[]>> {
  const labelSelector = `agentry.dev/agent-computer=${agentComputer}`;
  const kinds: ResourceType[] = [
    PodType,
    ServiceType,
    PersistentVolumeClaimType,
    SecretType,
    NetworkPolicyType,
    VirtualMachineType,
  ];
  const found: Record<string, string[]> = {};
  for (const type of kinds) {
    const { items } = await store.list(type, { namespace, labelSelector });
    found[type.kind] = items.map((item) => item.metadata.name).sort();
  }
  return found;
}

/** Deletes every AgentComputer of `namespace` and waits until they are gone (the operator must run). */
export async function deleteAgentComputers(
  store: ResourceStore,
  namespace: string,
  timeoutMs = 120_000,
): Promise<void> {
  const { items } = await store.list(AgentComputerType, { namespace });
  for (const ac of items) {
    await store.delete(AgentComputerType, namespace, ac.metadata.name).catch(() => undefined);
  }
  await eventually(
    `agent computers of ${namespace} gone`,
    async () => ((await store.list(AgentComputerType, { namespace })).items.length === 0 ? true : undefined),
    timeoutMs,
  );
}

/** Best effort: deletes a namespace and, given one, the Organization that owns it. */
export async function deleteNamespace(
  store: ResourceStore,
  namespace: string,
  organization?: string,
): Promise<void> {
  if (organization !== undefined)
    await store.delete(OrganizationType, undefined, organization).catch(() => undefined);
  await store.delete(NamespaceType, undefined, namespace).catch(() => undefined);
}

/** `{ apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true }` of an agent computer. */
export const controllerOf = (ac: AgentComputer): unknown => [
  {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    name: ac.metadata.name,
    uid: ac.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  },
];

/**
 * After DELETE: waits until the AgentComputer and every object made for it are gone (the finalizer
 * removes the workload and its token Secret; garbage collection the rest), then checks the REST 404.
 */
export async function expectNothingLeft(
  api: TestApi,
  key: string,
  store: ResourceStore,
  namespace: string,
  id: string,
  timeoutMs: number,
): Promise<void> {
  const empty = {
    Pod: [],
    Service: [],
    PersistentVolumeClaim: [],
    Secret: [],
    NetworkPolicy: [],
    VirtualMachine: [],
  };
  await eventually(
    'everything collected',
    async () => {
      const left = await workloadObjects(store, namespace, id);
      const gone = (await store.get(AgentComputerType, namespace, id)) === undefined;
      return gone && JSON.stringify(left) === JSON.stringify(empty) ? true : undefined;
    },
    timeoutMs,
  );
  expect(await workloadObjects(store, namespace, id)).toEqual(empty);
  expect((await call(api, `/v1/agent-computers/${id}`, { key })).status).toBe(404);
}
