import type { AgentComputer, Runtime } from '../../crds/index.js';

/** What a runtime saw of a workload after converging it; conditions are computed from this. */
export interface WorkloadObservation {
  /** The VM, pod or process objects exist (or, hibernated, everything that must persist does). */
  provisioned: boolean;
  /** The machine is up: VM Running, pod Running, process alive. */
  running: boolean;
  /** The runner answers its health check (or the platform's readiness says so). */
  ready: boolean;
  /** VM, pod or process name once it exists. */
  sandboxId?: string | undefined;
  /** Where the runner listens, reachable from the operator and API server. */
  endpoint?: string | undefined;
  /** Set when the workload cannot start without a change (ErrImagePull, unschedulable...). */
  provisionError?: string | undefined;
  /** A CamelCase reason and a sentence for the conditions and Kubernetes Events. */
  reason: string;
  message: string;
}

/** What the AgentComputer reconciler hands a runtime besides the resource. */
export interface WorkloadContext {
  /** Name of the Secret (same namespace, owned by the AgentComputer) holding key `token`. */
  tokenSecretName: string;
  /** The runner's token itself, for runtimes that pass it directly (process) or in cloud-init. */
  token: string;
}

/**
 * Where an agent computer runs (DESIGN.md §3). Implementations are idempotent and level-based:
 * `apply` converges the workload to `ac.spec` (operatingMode, resources, restartedAt) and reports.
 */
export interface WorkloadRuntime {
  readonly name: Runtime;
  apply(ac: AgentComputer, context: WorkloadContext, signal: AbortSignal): Promise<WorkloadObservation>;
  /** Removes everything the runtime made for `ac` that owner references do not already collect. */
  remove(ac: AgentComputer): Promise<void>;
}

/** Labels on every object made for an agent computer. */
export const workloadLabels = (ac: AgentComputer): Record<string, string> => ({
  'app.kubernetes.io/name': 'agentry-runner',
  'app.kubernetes.io/managed-by': 'agentry',
  'agentry.dev/agent-computer': ac.metadata.name,
});

/** The runner's HTTP port inside a workload. */
export const RUNNER_PORT = 8700;
