// The Kubernetes objects every cluster workload gets, whatever runs it (a Pod, or a VM's
// virt-launcher pod): the Service in front of its program and the NetworkPolicy around it.
import type { OwnerReference } from '../../crds/index.js';
import type { ClusterRuntimeOptions } from './cluster-options.js';
import type { NetworkPolicy, Service } from './kube-objects.js';
import { runnerNetworkPolicy } from './network-policy.js';
import { workloadLabels, workloadProgram } from './types.js';
import type { WorkloadObject } from './types.js';

export function namespaceOf(object: WorkloadObject): string {
  const { namespace } = object.metadata;
  if (namespace === undefined) throw new Error(`${object.kind} ${object.metadata.name} has no namespace`);
  return namespace;
}

/**
 * The ClusterIP Service `name` in front of the workload's program port. It selects the workload's
 * labels: a pod's own, or those a VM's template gives its virt-launcher pod (which forwards the port).
 */
export function workloadService(object: WorkloadObject, owner: OwnerReference, name: string): Service {
  const program = workloadProgram(object);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: namespaceOf(object),
      labels: workloadLabels(object),
      ownerReferences: [owner],
    },
    spec: {
      type: 'ClusterIP',
      selector: workloadLabels(object),
      ports: [{ name: program.name, protocol: 'TCP', port: program.port, targetPort: program.port }],
    },
  };
}

/** The NetworkPolicy `name`: the program port open to the control namespace only, egress as configured. */
export function workloadNetworkPolicy(
  object: WorkloadObject,
  owner: OwnerReference,
  name: string,
  options: Pick<ClusterRuntimeOptions, 'controlNamespace' | 'egress' | 'workspaceEgress'>,
): NetworkPolicy {
  const isWorkspace = workloadProgram(object).name === 'runner';
  return runnerNetworkPolicy({
    name,
    namespace: namespaceOf(object),
    labels: workloadLabels(object),
    ownerReferences: [owner],
    controlNamespace: options.controlNamespace,
    port: workloadProgram(object).port,
    previewPorts: isWorkspace,
    egress: isWorkspace ? (options.workspaceEgress ?? options.egress) : options.egress,
  });
}
