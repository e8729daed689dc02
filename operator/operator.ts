import type { Registry } from 'prom-client';
import { AgentComputerType, NamespaceType, OrganizationType, SecretType } from '../crds/index.js';
import type { Runtime } from '../crds/index.js';
import { EventRecorder } from '../platform/events.js';
import type { Logger } from '../platform/log.js';
import type { ResourceStore } from '../platform/store/types.js';
import { ControllerManager } from './controller/index.js';
import type { LeaderElectionConfig, ManagerExit } from './controller/index.js';
import type { ResourceType } from '../crds/index.js';
import { AgentComputerReconciler } from './reconcilers/agent-computer.js';
import { OrganizationReconciler } from './reconcilers/organization.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from './runtimes/kube-types.js';
import type { WorkloadRuntime } from './runtimes/types.js';

export interface OperatorOptions {
  store: ResourceStore;
  logger: Logger;
  registry: Registry;
  runtimes: ReadonlyMap<Runtime, WorkloadRuntime>;
  defaultRuntime: Runtime;
  /** Namespace of the API server and operator (admitted into organizations' namespaces). */
  controlNamespace?: string;
  leaderElection?: LeaderElectionConfig;
  /** Parallel reconciles of agent computers (each one waits on its workload's API calls). */
  agentComputerWorkers?: number;
}

export interface RunningOperator {
  manager: ControllerManager;
  /** Wakes the reconciler of one agent computer (runtimes call it when a workload changes). */
  notifyAgentComputer(namespace: string, name: string): void;
  /** Settles when the operator stops; 'lost-leadership' means the process should exit. */
  done: Promise<ManagerExit>;
  stop(): Promise<void>;
}

/** The Kubernetes kinds each runtime creates, so their changes wake the owning AgentComputer. */
function ownedTypes(runtimes: ReadonlyMap<Runtime, WorkloadRuntime>): ResourceType[] {
  const owned: ResourceType[] = [SecretType];
  if (runtimes.has('pod') || runtimes.has('kubevirt'))
    owned.push(ServiceType, NetworkPolicyType, PersistentVolumeClaimType);
  if (runtimes.has('pod')) owned.push(PodType);
  if (runtimes.has('kubevirt')) owned.push(VirtualMachineType);
  return owned;
}

/** Builds the operator's controllers on one manager and starts it (waiting for caches, and the lease). */
export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const { store, logger } = options;
  const manager = new ControllerManager({
    store,
    logger,
    registry: options.registry,
    ...(options.leaderElection === undefined ? {} : { leaderElection: options.leaderElection }),
  });
  const events = new EventRecorder(store, { component: 'agentry-operator', logger });
  manager.add({
    name: 'organization',
    for: OrganizationType,
    owns: [NamespaceType, NetworkPolicyType],
    reconciler: new OrganizationReconciler({
      store,
      logger,
      controlNamespace: options.controlNamespace ?? 'agentry-system',
    }),
  });
  const agentComputers = manager.add({
    name: 'agentcomputer',
    for: AgentComputerType,
    owns: ownedTypes(options.runtimes),
    reconciler: new AgentComputerReconciler({
      store,
      events,
      logger,
      runtimes: options.runtimes,
      defaultRuntime: options.defaultRuntime,
    }),
    workers: options.agentComputerWorkers ?? 4,
  });
  await manager.start();
  return {
    manager,
    notifyAgentComputer(namespace, name) {
      agentComputers.enqueue({ namespace, name });
    },
    done: manager.done,
    stop: () => manager.stop(),
  };
}
