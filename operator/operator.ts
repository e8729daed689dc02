import type { Registry } from 'prom-client';
import {
  AgentComputerType,
  CONTEXT_LAKE_NAME,
  CONTEXT_LAKE_SECRET_NAME,
  ContextLakeType,
  NamespaceType,
  OrganizationType,
  SecretType,
  TaskType,
} from '../crds/index.js';
import type { AgentComputer, Runtime, Task } from '../crds/index.js';
import type { ExecutorCatalog } from '../platform/executor-catalog.js';
import type { InstallationKey } from '../platform/installation-key.js';
import { EventRecorder } from '../platform/events.js';
import type { Logger } from '../platform/log.js';
import type { ObjectStore } from '../platform/objectstore/types.js';
import type { ResourceStore } from '../platform/store/types.js';
import { ControllerManager } from './controller/index.js';
import type { Controller } from './controller/index.js';
import { TaskReconciler } from './task/reconciler.js';
import { TaskEventFollowers } from './task/event-followers.js';
import { TaskMetrics } from './task/metrics.js';
import type { LeaderElectionConfig, ManagerExit } from './controller/index.js';
import type { ResourceType } from '../crds/index.js';
import { AgentComputerReconciler } from './agent-computer/reconciler.js';
import { ContextLakeReconciler } from './context-lake/reconciler.js';
import { OrganizationReconciler } from './organization/reconciler.js';
import {
  NetworkPolicyType,
  PersistentVolumeClaimType,
  PodType,
  ServiceType,
  VirtualMachineType,
} from './runtimes/kube-objects.js';
import type { WorkloadRuntime } from './runtimes/types.js';
import { addWebhookDeliveryController } from './webhook/index.js';
import { addLakeNotificationsController } from './context-lake/notifications/index.js';
import { addUploadedFileExpiryController } from './task/uploaded-file-expiry.js';
import type { SkillCatalog } from '../platform/skill-catalog.js';
import type { SqsNotificationQueues } from '../platform/lake-notifications/queues.js';

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
  /** Derives runner tokens (shared with the API server). */
  installationKey: InstallationKey;
  executors: ExecutorCatalog;
  /** Executor variables for which no Secret exists: the embedded default passes its own environment. */
  executorEnvFallback?: Readonly<Record<string, string>>;
  /** How long a task-made workspace stays up after its task's last prompt ended. Default 60 s. */
  ephemeralIdleGraceMs?: number;
  /** The skills catalog (AGENTRY_SKILLS_FILE); without it only `github:` references resolve. */
  skills?: SkillCatalog;
  /** Skills may be fetched from loopback and private addresses; default: the webhooks' setting. */
  allowPrivateSkillSources?: boolean;
  /** How long soft-deleted tasks are kept before they are removed. Default 7 days. */
  deletedTaskRetentionMs?: number;
  taskWorkers?: number;
  /** Delivers the tasks' webhook outboxes (operator/webhooks); without it, entries wait in the outbox. */
  webhooks?: { publicUrl: string; allowPrivateTargets: boolean; retrySchedule?: number[] };
  /** Uploaded files, handed to runners as signed URLs; the API server's store. Without it, prompts naming files fail. */
  objectStore?: ObjectStore;
  /** The organizations' SQS queues of S3 bucket notifications (AGENTRY_SQS_ENABLED); without them, nothing is polled. */
  lakeNotificationQueues?: SqsNotificationQueues;
  /** Context lakes run in the same runtimes (each runtime needs its lake settings: image, or the process runtime's lake command). */
  contextLakes?: {
    /** Parallel reconciles of context lakes. Default 2. */
    workers?: number;
    /** How often a lake that starts or loads is looked at again. Default 2 s. */
    busyPollMs?: number;
    /** How often a running lake's datasets and last query are read. Default 30 s. */
    runningPollMs?: number;
  };
}

export interface RunningOperator {
  manager: ControllerManager;
  /** Wakes the reconciler of one agent computer (runtimes call it when a workload changes). */
  notifyAgentComputer(namespace: string, name: string): void;
  /** Wakes the reconciler of one task. */
  notifyTask(namespace: string, name: string): void;
  /** Wakes the reconciler of one context lake (runtimes call it when its workload changes). */
  notifyContextLake(namespace: string, name: string): void;
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
    // A task's prompts keep its workspace from idling, and their end restarts the idle clock.
    watches: [
      {
        type: TaskType,
        map: (task: Task) => [{ namespace: task.metadata.namespace, name: task.spec.workspace }],
      },
    ],
    reconciler: new AgentComputerReconciler({
      store,
      events,
      logger,
      runtimes: options.runtimes,
      defaultRuntime: options.defaultRuntime,
      installationKey: options.installationKey,
      objectStore: options.objectStore,
    }),
    workers: options.agentComputerWorkers ?? 4,
  });
  const tasks = addTaskController(manager, options, events);
  const contextLakes = addContextLakeController(manager, options, events);
  if (options.webhooks !== undefined) {
    addWebhookDeliveryController(manager, {
      ...options.webhooks,
      store,
      logger,
      registry: options.registry,
      controlNamespace: options.controlNamespace ?? 'agentry-system',
      installationKey: options.installationKey,
    });
  }
  const lakeNotifications =
    options.lakeNotificationQueues === undefined
      ? undefined
      : addLakeNotificationsController(manager, {
          store,
          logger,
          registry: options.registry,
          queues: options.lakeNotificationQueues,
          installationKey: options.installationKey,
        });
  if (options.objectStore !== undefined) {
    addUploadedFileExpiryController(manager, {
      objectStore: options.objectStore,
      logger: logger.child({ controller: 'uploaded-file-expiry' }),
      registry: options.registry,
    });
  }
  await manager.start();
  return {
    manager,
    notifyAgentComputer(namespace, name) {
      agentComputers.enqueue({ namespace, name });
    },
    notifyTask(namespace, name) {
      tasks.controller.enqueue({ namespace, name });
    },
    notifyContextLake(namespace, name) {
      contextLakes.enqueue({ namespace, name });
    },
    done: manager.done,
    async stop() {
      await manager.stop();
      await tasks.followers.stopAll();
      await lakeNotifications?.stopPollers();
    },
  };
}

/** The ContextLake controller, woken by its lakes, their workloads' objects and their credentials Secret. */
function addContextLakeController(
  manager: ControllerManager,
  options: OperatorOptions,
  events: EventRecorder,
): Controller {
  const settings = options.contextLakes ?? {};
  return manager.add({
    name: 'contextlake',
    for: ContextLakeType,
    owns: ownedTypes(options.runtimes),
    // The `${secrets:...}` values: a changed credential is pushed to the running lake.
    watches: [
      {
        type: SecretType,
        map: (secret) =>
          secret.metadata.name === CONTEXT_LAKE_SECRET_NAME
            ? [{ namespace: secret.metadata.namespace, name: CONTEXT_LAKE_NAME }]
            : [],
      },
    ],
    reconciler: new ContextLakeReconciler({
      store: options.store,
      events,
      logger: options.logger.child({ controller: 'contextlake' }),
      runtimes: options.runtimes,
      defaultRuntime: options.defaultRuntime,
      installationKey: options.installationKey,
      ...(settings.busyPollMs === undefined ? {} : { busyPollMs: settings.busyPollMs }),
      ...(settings.runningPollMs === undefined ? {} : { runningPollMs: settings.runningPollMs }),
    }),
    workers: settings.workers ?? 2,
  });
}

/** The Task controller, woken by its tasks, by their workspaces' changes and by runner events. */
function addTaskController(manager: ControllerManager, options: OperatorOptions, events: EventRecorder) {
  const holder: { controller?: Controller } = {};
  const followers = new TaskEventFollowers({
    logger: options.logger.child({ component: 'task-events' }),
    onProgress: (namespace, name) => holder.controller?.enqueue({ namespace, name }),
  });
  const controller = manager.add({
    name: 'task',
    for: TaskType,
    watches: [
      {
        type: AgentComputerType,
        map: (workspace: AgentComputer) =>
          manager.caches
            .list(TaskType, workspace.metadata.namespace)
            .filter((task) => task.spec.workspace === workspace.metadata.name)
            .map((task) => ({ namespace: task.metadata.namespace, name: task.metadata.name })),
      },
    ],
    reconciler: new TaskReconciler({
      store: options.store,
      logger: options.logger.child({ controller: 'task' }),
      events,
      installationKey: options.installationKey,
      executors: options.executors,
      followers,
      metrics: new TaskMetrics(options.registry),
      envFallback: options.executorEnvFallback ?? {},
      objectStore: options.objectStore,
      ...(options.skills === undefined ? {} : { skills: options.skills }),
      ...(options.ephemeralIdleGraceMs === undefined
        ? {}
        : { ephemeralIdleGraceMs: options.ephemeralIdleGraceMs }),
      allowPrivateSkillSources:
        options.allowPrivateSkillSources ?? options.webhooks?.allowPrivateTargets ?? false,
      ...(options.deletedTaskRetentionMs === undefined
        ? {}
        : { deletedRetentionMs: options.deletedTaskRetentionMs }),
    }),
    workers: options.taskWorkers ?? 4,
  });
  holder.controller = controller;
  return { controller, followers };
}
