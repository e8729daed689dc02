import { SecretType } from '../../crds/index.js';
import type { ResourceType, Runtime } from '../../crds/index.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from './kube-objects.js';

/**
 * The Kubernetes kinds a workload's owner (an AgentComputer, a ContextLake) owns with these runtimes
 * enabled: its token Secret and what the runtimes create, so their changes wake the owner.
 */
export function workloadOwnedTypes(runtimes: ReadonlyMap<Runtime, unknown>): ResourceType[] {
  const owned: ResourceType[] = [SecretType];
  if (runtimes.has('pod') || runtimes.has('kubevirt'))
    owned.push(ServiceType, NetworkPolicyType, PersistentVolumeClaimType);
  if (runtimes.has('pod')) owned.push(PodType);
  if (runtimes.has('kubevirt')) owned.push(VirtualMachineType);
  return owned;
}
