import { AgentComputerReasons, MANAGED_BY_LABEL } from '../../crds/index.js';
import type {
  ContextLakeReasons,
  KubeObject,
  OperatingMode,
  Runtime,
  WorkloadResources,
} from '../../crds/index.js';
import { LAKE_PORT } from '../../platform/lake-protocol.js';
import type { Caches } from '../controller/caches.js';

/** What a runtime saw of a workload after converging it; conditions are computed from this. */
export interface WorkloadObservation {
  /** The VM, pod or process objects exist (or, hibernated, everything that must persist does). */
  provisioned: boolean;
  /** The machine is up: VM Running, pod Running, process alive. */
  running: boolean;
  /** The program (runner or lake server) answers its health check (or the platform's readiness says so). */
  ready: boolean;
  /** VM, pod or process name once it exists. */
  sandboxId?: string | undefined;
  /** Where the program listens, reachable from the operator and API server. */
  endpoint?: string | undefined;
  /**
   * The workload's own address when `endpoint` names something else (a pod's IP behind its Service):
   * where the API server reaches its other ports (preview URLs).
   */
  address?: string | undefined;
  /** Set when the workload cannot start without a change (ErrImagePull, unschedulable...). */
  provisionError?: string | undefined;
  /** The Provisioned condition's reason with `provisionError` when more precise than `ProvisionFailed`. */
  provisionErrorReason?: ProvisionFailureReason | undefined;
  /** The runtime's word for what it saw (one of ObservationReasons) and a sentence; the message becomes conditions' messages. */
  reason: ObservationReason;
  message: string;
}

/**
 * What a runtime reports it saw, for logs, tests and the reconcilers' decisions. These are not
 * condition reasons: each kind's conditions carry the reasons of its catalog (crds/<kind>/conditions.ts,
 * docs/conditions.md), which the reconcilers derive from the whole observation.
 */
export const ObservationReasons = {
  /** The runtime failed before it could look (the reconciler's placeholder). */
  NotObserved: 'NotObserved',
  /** The VM or pod is being created or scheduled. */
  Provisioning: 'Provisioning',
  /** The machine runs; the program does not answer its health check yet. */
  Starting: 'Starting',
  /** The process answered before and does not now. */
  Unhealthy: 'Unhealthy',
  /** The process ended and is restarted after a back-off. */
  RestartBackoff: 'RestartBackoff',
  /** spec.restartedAt changed: the workload is being replaced. */
  Redeploying: 'Redeploying',
  /** Asked to hibernate; the workload is stopping. */
  Hibernating: 'Hibernating',
  /** Stopped on purpose; what must persist is kept. */
  Hibernated: 'Hibernated',
  /** It cannot start without a change; provisionError says why. */
  ProvisionFailed: 'ProvisionFailed',
  /** The process runtime cannot confine it (bubblewrap cannot run). */
  IsolationUnavailable: 'IsolationUnavailable',
  /** The agent runner answers. */
  RunnerReady: 'RunnerReady',
  /** The lake server answers. */
  LakeReady: 'LakeReady',
} as const;
export type ObservationReason = (typeof ObservationReasons)[keyof typeof ObservationReasons];

/**
 * Reasons of the Provisioned condition (of an AgentComputer and a ContextLake alike) that say more
 * than `ProvisionFailed`; documented in crds/<kind>/conditions.ts.
 */
export const ProvisionFailureReasons = {
  /** The process runtime confines workloads with bubblewrap, which cannot run here; the message says what to install. */
  IsolationUnavailable: AgentComputerReasons.IsolationUnavailable,
} as const satisfies Record<string, keyof typeof ContextLakeReasons>;
export type ProvisionFailureReason = (typeof ProvisionFailureReasons)[keyof typeof ProvisionFailureReasons];

/** What the reconciler hands a runtime besides the resource. */
export interface WorkloadContext {
  /** Name of the Secret (same namespace, owned by the resource) holding key `token`. */
  tokenSecretName: string;
  /** The workload's token itself, for runtimes that pass it directly (process) or in cloud-init. */
  token: string;
  /**
   * Settles once the token Secret is stored (the reconciler writes it beside the runtime's own
   * objects): a runtime that mounts it starts the workload only after.
   */
  tokenStored?: Promise<void> | undefined;
  /**
   * Settles once the resource holds its workload finalizer, when the reconciler writes it beside the
   * runtime's objects (runtimes `collectedByOwnerReferences`): the runtime starts the workload (Pod,
   * VM) only after, so nothing runs that a deletion could skip. Rejects when that write fails.
   */
  finalizerStored?: Promise<unknown> | undefined;
  /** The operator's informer caches of the kinds the runtime makes: read there, not from the store. */
  cache?: Caches | undefined;
}

/** The part of a resource's spec that says how its workload runs (AgentComputer and ContextLake share it). */
export interface WorkloadSpec {
  operatingMode: OperatingMode;
  resources?: WorkloadResources | undefined;
  /** Changing it redeploys the workload. */
  restartedAt?: string | undefined;
}

/**
 * What a runtime runs: an AgentComputer (the agent runner) or a ContextLake (the lake server). The
 * runtime reads the spec above and the object's identity (owner references, names, labels); which
 * program runs follows from the kind (see workloadProgram).
 */
export type WorkloadObject = KubeObject & { spec: WorkloadSpec };

/**
 * The program a workload runs, and everything about it that differs between an agent computer and
 * a context lake. The runtimes are one implementation each; they read their differences from here.
 */
export interface WorkloadProgram {
  /** `agentry <name>` starts it; also the suffix of object names (`<resource>-runner`, `<resource>-lake`). */
  name: 'runner' | 'lake';
  /** The resource kind it runs for. */
  kind: 'AgentComputer' | 'ContextLake';
  /** Value of `app.kubernetes.io/name` on its objects. */
  appName: string;
  /** The label naming the owning resource on every object (pods are found by it). */
  ownerLabel: string;
  /** Its HTTP port inside a pod or VM. */
  port: number;
  /** Its environment variables start with this: AGENTRY_RUNNER_TOKEN, AGENTRY_LAKE_TOKEN... */
  envPrefix: 'AGENTRY_RUNNER_' | 'AGENTRY_LAKE_';
  /** How its readiness shows in observations. */
  readyReason: typeof ObservationReasons.RunnerReady | typeof ObservationReasons.LakeReady;
  /** Words for logs and messages: "runner", "lake server". */
  noun: string;
}

export const RUNNER_PROGRAM: WorkloadProgram = {
  name: 'runner',
  kind: 'AgentComputer',
  appName: 'agentry-runner',
  ownerLabel: 'agentry.dev/agent-computer',
  port: 8700,
  envPrefix: 'AGENTRY_RUNNER_',
  readyReason: ObservationReasons.RunnerReady,
  noun: 'runner',
};

export const LAKE_PROGRAM: WorkloadProgram = {
  name: 'lake',
  kind: 'ContextLake',
  appName: 'agentry-lake',
  ownerLabel: 'agentry.dev/context-lake',
  port: LAKE_PORT,
  envPrefix: 'AGENTRY_LAKE_',
  readyReason: ObservationReasons.LakeReady,
  noun: 'lake server',
};

/** The program of a resource, by its kind; any other kind is a programming error. */
export function workloadProgram(object: Pick<KubeObject, 'kind'>): WorkloadProgram {
  if (object.kind === RUNNER_PROGRAM.kind) return RUNNER_PROGRAM;
  if (object.kind === LAKE_PROGRAM.kind) return LAKE_PROGRAM;
  throw new Error(`no workload program runs for kind ${object.kind}`);
}

/**
 * Where a workload runs (docs/architecture.md#runtimes). Implementations are idempotent and level-based: `apply`
 * converges the workload to `object.spec` (operatingMode, resources, restartedAt) and reports.
 */
export interface WorkloadRuntime {
  readonly name: Runtime;
  /**
   * Whether owner-reference garbage collection removes everything `apply` makes (cluster objects
   * owned by the resource): then the reconciler may write its finalizer beside them instead of first,
   * one round trip less. False where `remove` must run (a local process only the finalizer stops).
   */
  readonly collectedByOwnerReferences: boolean;
  apply(object: WorkloadObject, context: WorkloadContext, signal: AbortSignal): Promise<WorkloadObservation>;
  /** Removes everything the runtime made for `object` that owner references do not already collect. */
  remove(object: WorkloadObject): Promise<void>;
}

/** Labels on every object made for a workload. */
export const workloadLabels = (object: WorkloadObject): Record<string, string> => {
  const program = workloadProgram(object);
  return {
    'app.kubernetes.io/name': program.appName,
    [MANAGED_BY_LABEL]: 'agentry',
    [program.ownerLabel]: object.metadata.name,
  };
};

/** The runner's HTTP port inside a workload. */
export const RUNNER_PORT = RUNNER_PROGRAM.port;
/** The lake server's HTTP port inside a workload. */
export { LAKE_PORT };
