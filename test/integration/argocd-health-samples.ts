// Objects of every Agentry kind in the states Argo CD must tell apart, with statuses made by the
// operator's own status functions where it has them, and every object parsed with its kind's CRD
// schema, so a sample cannot drift from what the operator writes.
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  ContextLakeConditions,
  ContextLakeSpecSchema,
  ContextLakeType,
  OrganizationConditions,
  OrganizationSpecSchema,
  OrganizationType,
  TaskConditions,
  TaskType,
  WebhookSpecSchema,
  WebhookType,
  WorkspacePoolConditions,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type {
  AgentComputer,
  Condition,
  ContextLake,
  ContextLakeStatus,
  CustomResourceType,
  OperatingMode,
  Organization,
  PromptStatusEntry,
  Task,
  TaskStatus,
  Webhook,
  WebhookStatus,
  WorkspacePool,
} from '../../crds/index.js';
import { setCondition } from '../../crds/conditions.js';
import type { ConditionInput } from '../../crds/conditions.js';
import { computeAgentComputerStatus, runtimeNotEnabledStatus } from '../../operator/agent-computer/status.js';
import { computeLakeStatus, mergeLakeStatus } from '../../operator/context-lake/status.js';
import type { LakePass } from '../../operator/context-lake/status.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';
import { computeTaskStatus } from '../../operator/task/prompt-progress.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const GENERATION = 2;
const P1 = '00000000-0000-4000-8000-000000000001';
const P2 = '00000000-0000-4000-8000-000000000002';

/** The object with this status, as the API server would return it (the CRD schema parses it). */
const parsed = <Spec, Status>(
  type: CustomResourceType<Spec, Status>,
  { metadata, spec }: { metadata: object; spec: Spec },
  status: Status | undefined,
) =>
  type.schema.parse({
    apiVersion: apiVersionOf(type),
    kind: type.kind,
    metadata,
    spec,
    ...(status === undefined ? {} : { status }),
  });

/** The same object after a spec change the operator has not seen yet. */
const newerGeneration = <T extends { metadata: { generation?: number | undefined } }>(object: T): T => ({
  ...object,
  metadata: { ...object.metadata, generation: GENERATION + 1 },
});

const withCondition = <S extends { conditions?: Condition[] | undefined }>(
  status: S,
  input: ConditionInput,
): S => ({
  ...status,
  conditions: setCondition(status.conditions, input, GENERATION, NOW),
});

// Organization ---------------------------------------------------------------------------------

const organization = (ready?: Omit<ConditionInput, 'type'>): Organization =>
  parsed(
    OrganizationType,
    {
      metadata: { name: 'acme', generation: GENERATION },
      spec: OrganizationSpecSchema.parse({ displayName: 'A' }),
    },
    ready === undefined
      ? undefined
      : {
          namespace: 'agentry-org-acme',
          observedGeneration: GENERATION,
          conditions: setCondition([], { type: OrganizationConditions.Ready, ...ready }, GENERATION, NOW),
        },
  );

const namespaceReady = {
  status: 'True',
  reason: 'NamespaceReady',
  message: 'resources live in agentry-org-acme',
} as const;

export const organizationSamples = {
  'namespace made or adopted': organization(namespaceReady),
  'namespace held by another organization': organization({
    status: 'False',
    reason: 'NamespaceFailed',
    message:
      'namespace agentry-org-acme belongs to organization globex; set spec.namespace to another namespace',
  }),
  'not seen by the operator yet': organization(),
  'status of an older generation': newerGeneration(organization(namespaceReady)),
};

// AgentComputer --------------------------------------------------------------------------------

const agentComputer = (mode: OperatingMode = 'Running'): AgentComputer =>
  parsed(
    AgentComputerType,
    {
      metadata: { name: 'w', namespace: 'agentry-org-acme', generation: GENERATION },
      spec: AgentComputerSpecSchema.parse({ runtime: 'pod', operatingMode: mode }),
    },
    undefined,
  );

const observed = (ac: AgentComputer, observation: WorkloadObservation, failure?: string): AgentComputer =>
  parsed(AgentComputerType, ac, computeAgentComputerStatus(ac, observation, failure, NOW));

const runner = (ready: boolean, running = ready): WorkloadObservation => ({
  provisioned: true,
  running,
  ready,
  sandboxId: 'agentcomputer-w',
  endpoint: 'http://agentcomputer-w.agentry-org-acme:8080',
  reason: ready ? 'RunnerReady' : 'Starting',
  message: ready ? 'the runner answers' : 'Pod agentcomputer-w is starting',
});

const imagePullFailed: WorkloadObservation = {
  ...runner(false),
  provisionError:
    'Pod cannot start: ErrImagePull — the image x could not be pulled; check spec.resources.image',
  reason: 'ProvisionFailed',
  message: 'Pod cannot start: ErrImagePull',
};

export const agentComputerSamples = {
  'runner answers': observed(agentComputer(), runner(true)),
  'pod starting': observed(agentComputer(), runner(false)),
  hibernated: observed(agentComputer('Hibernated'), runner(false, false)),
  'hibernating, pod still stopping': observed(agentComputer('Hibernated'), {
    ...runner(false, true),
    message: 'Pod agentcomputer-w is terminating',
  }),
  'image cannot be pulled': observed(agentComputer(), imagePullFailed),
  'runtime not enabled': parsed(
    AgentComputerType,
    agentComputer(),
    runtimeNotEnabledStatus(agentComputer(), 'kubevirt', ['pod'], NOW),
  ),
  'not seen by the operator yet': agentComputer(),
  'status of an older generation': newerGeneration(observed(agentComputer(), runner(true))),
};

// Task -----------------------------------------------------------------------------------------

const task = (entries: PromptStatusEntry[], change?: (status: TaskStatus) => TaskStatus): Task => {
  const base = parsed(
    TaskType,
    {
      metadata: { name: 't', namespace: 'agentry-org-acme', generation: GENERATION },
      spec: {
        workspace: 'w',
        executor: 'shell',
        title: 'build',
        owner: 'u',
        visibility: 'shared',
        prompts: [P1, P2].map((id) => ({ id, text: 'make', submittedAt: '2026-11-25T11:00:00.000Z' })),
      },
    },
    undefined,
  );
  const status = computeTaskStatus(base, entries, { reason: 'WorkspaceReady', message: 'ready' }, NOW);
  return parsed(TaskType, base, change === undefined ? status : change(status));
};

const done = { id: P1, status: 'succeeded', completedAt: '2026-11-25T11:10:00.000Z' } as const;
const ended = (status: 'succeeded' | 'failed' | 'canceled', error?: string): PromptStatusEntry => ({
  id: P2,
  status,
  completedAt: '2026-11-25T11:20:00.000Z',
  ...(error === undefined ? {} : { error }),
});

export const taskSamples = {
  'a prompt running': task([done, { id: P2, status: 'running', startedAt: '2026-11-25T11:15:00.000Z' }]),
  'a prompt pending': task([done, { id: P2, status: 'pending' }]),
  completed: task([done, ended('succeeded')]),
  canceled: task([done, ended('canceled')]),
  'latest prompt failed': task([done, ended('failed', 'the executor exited with status 2')]),
  'completed, archiving failed': task([done, ended('succeeded')], (status) =>
    withCondition(status, {
      type: TaskConditions.Archived,
      status: 'False',
      reason: 'ArchiveFailed',
      message: 'archiving prompt events failed: the bucket does not exist',
    }),
  ),
  'not seen by the operator yet': parsed(TaskType, task([]), undefined),
  'status of an older generation': newerGeneration(task([done, ended('succeeded')])),
};

// ContextLake ----------------------------------------------------------------------------------

const lake = (mode: OperatingMode): ContextLake =>
  parsed(
    ContextLakeType,
    {
      metadata: { name: 'context-lake', namespace: 'agentry-org-acme', generation: GENERATION },
      spec: ContextLakeSpecSchema.parse({
        operatingMode: mode,
        config: { name: 'acme', datasets: [{ name: 'orders', from: 's3://acme/orders/' }] },
      }),
    },
    undefined,
  );

const lakeWorkload: WorkloadObservation = { ...runner(true), reason: 'LakeReady', message: 'ready' };

const served = (orders: LakeStatus['datasets'][string]): LakeStatus => ({
  generation: GENERATION,
  loading: false,
  datasets: { orders },
  views: {},
});

const lakeAfter = (
  mode: OperatingMode,
  pass: Partial<LakePass>,
  change?: (status: ContextLakeStatus) => ContextLakeStatus,
): ContextLake => {
  const base = lake(mode);
  const full: LakePass = { notProvisioned: false, workload: lakeWorkload, secretValues: [], ...pass };
  const status = mergeLakeStatus(undefined, computeLakeStatus(base, full, NOW), NOW);
  return parsed(ContextLakeType, base, change === undefined ? status : change(status));
};

export const contextLakeSamples = {
  'serving this generation': lakeAfter('Running', { lake: served({ status: 'ready' }) }),
  'never started (hibernated)': lakeAfter('Hibernated', { notProvisioned: true, workload: undefined }),
  paused: lakeAfter('Hibernated', { workload: runner(false, false) }),
  'lake server starting': lakeAfter('Running', { workload: runner(false) }),
  'loading this generation': lakeAfter('Running', { lake: served({ status: 'loading' }) }),
  'workload failed': lakeAfter('Running', {
    workload: undefined,
    failure: 'the lake pod cannot be scheduled',
  }),
  'configuration invalid': lakeAfter('Running', {
    lake: served({ status: 'ready' }),
    configProblem: 'params of orders name keys missing from context-lake-credentials: s3_key',
  }),
  'a dataset failed': lakeAfter('Running', { lake: served({ status: 'error', error: 'no such bucket' }) }),
  'notification queue failed': lakeAfter('Running', { lake: served({ status: 'ready' }) }, (status) =>
    withCondition(status, {
      type: ContextLakeConditions.NotificationsReady,
      status: 'False',
      reason: 'QueueFailed',
      message: 'creating the SQS queue failed: access denied',
    }),
  ),
  'not seen by the operator yet': lake('Running'),
  'status of an older generation': newerGeneration(
    lakeAfter('Running', { lake: served({ status: 'ready' }) }),
  ),
};

// Webhook --------------------------------------------------------------------------------------

const webhook = (status?: WebhookStatus): Webhook =>
  parsed(
    WebhookType,
    {
      metadata: { name: 'h', namespace: 'agentry-org-acme', generation: 1 },
      spec: WebhookSpecSchema.parse({ url: 'https://hooks.example.com/agentry', events: ['task.completed'] }),
    },
    status,
  );

export const webhookSamples = {
  'no delivery yet': webhook(),
  delivered: webhook({ isActive: true, failureCount: 0, lastTriggeredAt: '2026-11-25T11:00:00.000Z' }),
  'deliveries failing': webhook({
    isActive: true,
    failureCount: 3,
    lastTriggeredAt: '2026-11-25T11:00:00.000Z',
    lastError: 'connect ECONNREFUSED',
  }),
  'target answered 410 Gone': webhook({ isActive: false, failureCount: 0 }),
};

// WorkspacePool --------------------------------------------------------------------------------

const workspacePool = (
  counts: { desired: number; ready: number; provisioning: number },
  ready?: Omit<ConditionInput, 'type'>,
): WorkspacePool =>
  parsed(
    WorkspacePoolType,
    {
      metadata: { name: 'default', namespace: 'agentry-org-acme', generation: GENERATION },
      spec: WorkspacePoolSpecSchema.parse({ minReady: 2 }),
    },
    ready === undefined
      ? undefined
      : {
          ...counts,
          claimed: 0,
          observedGeneration: GENERATION,
          conditions: setCondition([], { type: WorkspacePoolConditions.Ready, ...ready }, GENERATION, NOW),
        },
  );

const filled = { status: 'True', reason: 'Filled', message: '2 workspaces ready to claim' } as const;

export const workspacePoolSamples = {
  filled: workspacePool({ desired: 2, ready: 2, provisioning: 0 }, filled),
  refilling: workspacePool(
    { desired: 2, ready: 1, provisioning: 1 },
    { status: 'False', reason: 'Refilling', message: '1 workspace starting' },
  ),
  'members cannot start': workspacePool(
    { desired: 2, ready: 0, provisioning: 2 },
    { status: 'False', reason: 'RefillFailed', message: 'ErrImagePull: no such image' },
  ),
  'maxReady below minReady': workspacePool(
    { desired: 0, ready: 0, provisioning: 0 },
    { status: 'False', reason: 'InvalidSpec', message: 'spec.maxReady 1 is below spec.minReady 2' },
  ),
  'not seen by the operator yet': workspacePool({ desired: 0, ready: 0, provisioning: 0 }),
  'status of an older generation': newerGeneration(
    workspacePool({ desired: 2, ready: 2, provisioning: 0 }, filled),
  ),
};
