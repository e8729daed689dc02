import type { Logger } from '../../platform/log.js';
import type { WorkloadPlacement } from '../../platform/workload-placement.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { EgressOptions } from './network-policy.js';
import type { LakeWorkloadSettings } from './program-layout.js';

/** Resources of a workload when its `spec.resources` leaves them unset. */
export interface WorkloadDefaults {
  cpu: string;
  memory: string;
  disk: string;
}

/** What the runtimes that make Kubernetes objects (pod, kubevirt) are configured with. */
export interface ClusterRuntimeOptions {
  store: ResourceStore;
  /** Where the API server and operator run: the only pods the NetworkPolicy admits. */
  controlNamespace: string;
  /**
   * Used when `spec.resources.image` is unset. pod: the runner image. kubevirt: the root disk's
   * source, a container image with a bootable disk (imported by CDI) or `pvc:<namespace>/<name>`
   * to clone a golden PVC.
   */
  defaultImage: string;
  defaults: WorkloadDefaults;
  /** Storage class of the workload disk (PVC or DataVolume); unset: the cluster default. */
  storageClassName?: string | undefined;
  /** Nodes workloads must go to (selector, tolerations); unset: wherever the scheduler puts them. */
  placement?: WorkloadPlacement | undefined;
  /** Egress of workloads; unset: DEFAULT_EGRESS (internet, not the cluster nor metadata). */
  egress?: EgressOptions | undefined;
  /** Egress of workspaces (runners) when it differs from `egress`: through the egress proxy only. Lakes keep `egress`. */
  workspaceEgress?: EgressOptions | undefined;
  /** Context lakes: their image (else `defaultImage`, which has `agentry lake` too) and connectors. */
  lake?: LakeWorkloadSettings | undefined;
  logger: Logger;
}

/**
 * The placement fields of a pod or VMI spec; none when unset, so that the pod template (and its
 * hash) of an installation without placement stays what it was.
 */
export function placementFields(placement: WorkloadPlacement | undefined): Record<string, unknown> {
  if (placement === undefined) return {};
  const { nodeSelector, tolerations } = placement;
  return {
    ...(Object.keys(nodeSelector).length === 0 ? {} : { nodeSelector: { ...nodeSelector } }),
    ...(tolerations.length === 0 ? {} : { tolerations: tolerations.map((t) => ({ ...t })) }),
  };
}
