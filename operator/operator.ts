import type { Registry } from 'prom-client';
import type { Runtime, WorkspacePoolSpec } from '../crds/index.js';
import type { ExecutorCatalog } from '../platform/executor-catalog.js';
import type { InstallationKey } from '../platform/installation-key.js';
import { EventRecorder } from '../platform/events.js';
import type { Logger } from '../platform/log.js';
import type { ObjectStore } from '../platform/objectstore/types.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { SkillCatalog } from '../platform/skill-catalog.js';
import type { SqsNotificationQueues } from '../platform/lake-notifications/queues.js';
import { ControllerManager } from './controller/index.js';
import type { AddedController, LeaderElectionConfig, ManagerExit } from './controller/index.js';
import { addAgentComputerController } from './agent-computer/controller.js';
import { RunnerConnections } from './agent-computer/runner-connections.js';
import { addContextLakeController, addLakeNotificationsController } from './context-lake/controller.js';
import { addOrganizationController } from './organization/controller.js';
import { addTaskController, addUploadedFileExpiryController } from './task/controller.js';
import { addWebhookDeliveryController } from './webhook/controller.js';
import { addWorkspacePoolController } from './workspace-pool/controller.js';
import type { WorkloadRuntime } from './runtimes/types.js';
import { PromptTokens } from '../platform/model-gateway/token.js';
import type { WorkspaceAccess } from './task/workspace-access.js';

export interface OperatorOptions {
  store: ResourceStore;
  logger: Logger;
  registry: Registry;
  runtimes: ReadonlyMap<Runtime, WorkloadRuntime>;
  defaultRuntime: Runtime;
  /** Namespace of the API server and operator (admitted into organizations' namespaces). */
  controlNamespace?: string;
  leaderElection?: LeaderElectionConfig;
  /** The warm pool of every organization that sets none (AGENTRY_DEFAULT_WORKSPACE_POOL); without it, none. */
  defaultWorkspacePool?: WorkspacePoolSpec | undefined;
  /** Parallel reconciles of agent computers (each one waits on its workload's API calls). */
  agentComputerWorkers?: number;
  /**
   * Keep the operator's connections to ready runners open (operator/agent-computer/runner-connections.ts).
   * `agentry serve` and `agentry operator` turn it on; off, a test on a cluster whose Pods run
   * nothing (KWOK) never looks up their Services' names.
   */
  keepRunnerConnections?: boolean;
  /** Derives runner tokens (shared with the API server). */
  installationKey: InstallationKey;
  executors: ExecutorCatalog;
  /** Executor variables for which no Secret exists: the embedded default passes its own environment. */
  executorEnvFallback?: Readonly<Record<string, string>>;
  /** How long a warm-pool member may fail to start before it is replaced. Default 5 min. */
  failedPoolMemberGraceMs?: number;
  /** How long a task-made workspace stays up after its task's last prompt ended. Default 60 s. */
  ephemeralIdleGraceMs?: number;
  /** The skills catalog (AGENTRY_SKILLS_FILE); without it only `github:` references resolve. */
  skills?: SkillCatalog;
  /** Skills may be fetched from loopback and private addresses; default: the webhooks' setting. */
  allowPrivateSkillSources?: boolean;
  /** Where prompts reach the model gateway and the egress proxy (docs/adr/0009); unset parts are off. */
  workspaceAccess?: Omit<WorkspaceAccess, 'tokens'>;
  /** How long soft-deleted tasks are kept before they are removed. Default 7 days. */
  deletedTaskRetentionMs?: number;
  taskWorkers?: number;
  /** Delivers the tasks' webhook outboxes (operator/webhook); without it, entries wait in the outbox. */
  webhooks?: { publicUrl: string; allowPrivateTargets: boolean; retrySchedule?: number[] };
  /** Uploaded files, handed to runners as signed URLs; the API server's store. Without it, prompts naming files fail. */
  objectStore?: ObjectStore;
  /** The organizations' SQS queues of S3 bucket notifications (AGENTRY_SQS_ENABLED); without them, nothing is polled. */
  lakeNotificationQueues?: SqsNotificationQueues;
  /** Context lakes run in the same runtimes (each runtime needs its lake settings: image, or the process runtime's lake command). */
  contextLakes?: {
    /** Parallel reconciles of context lakes. Default 2. */
    workers?: number;
    /** How often a lake whose server answers but still loads is looked at again (a booting workload wakes it by watch events). Default 2 s. */
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

/**
 * Builds the operator's controllers on one manager and starts it (waiting for caches, and the lease).
 * Each kind's folder adds its own controllers (operator/<kind>/controller.ts); this only builds what
 * they share and lists them.
 */
export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const { store, logger, registry, installationKey, objectStore } = options;
  const manager = new ControllerManager({
    store,
    logger,
    registry,
    ...(options.leaderElection === undefined ? {} : { leaderElection: options.leaderElection }),
  });
  const controlNamespace = options.controlNamespace ?? 'agentry-system';
  const shared = { store, logger, registry };
  const events = new EventRecorder(store, { component: 'agentry-operator', logger });
  const workloads = {
    events,
    installationKey,
    runtimes: options.runtimes,
    defaultRuntime: options.defaultRuntime,
  };
  const allowPrivateTargets = options.webhooks?.allowPrivateTargets ?? false;

  const organizations = addOrganizationController(manager, {
    ...shared,
    controlNamespace,
    defaultWorkspacePool: options.defaultWorkspacePool,
  });
  const agentComputers = addAgentComputerController(manager, {
    ...shared,
    ...workloads,
    objectStore,
    connections:
      options.keepRunnerConnections === true
        ? new RunnerConnections({
            logger: logger.child({ component: 'runner-connections' }),
            tokenOf: (ac) => installationKey.runnerToken(ac),
          })
        : undefined,
    workers: options.agentComputerWorkers,
  });
  const workspacePools = addWorkspacePoolController(manager, {
    ...shared,
    events,
    failedMemberGraceMs: options.failedPoolMemberGraceMs,
  });
  const tasks = addTaskController(manager, {
    ...shared,
    events,
    installationKey,
    executors: options.executors,
    envFallback: options.executorEnvFallback ?? {},
    objectStore,
    skills: options.skills,
    ephemeralIdleGraceMs: options.ephemeralIdleGraceMs,
    allowPrivateSkillSources: options.allowPrivateSkillSources ?? allowPrivateTargets,
    ...(options.workspaceAccess === undefined
      ? {}
      : { access: { ...options.workspaceAccess, tokens: new PromptTokens(installationKey) } }),
    deletedRetentionMs: options.deletedTaskRetentionMs,
    workers: options.taskWorkers,
  });
  const contextLakes = addContextLakeController(manager, {
    ...shared,
    ...workloads,
    ...options.contextLakes,
  });
  // Controllers of optional features: only with their settings.
  const webhookDeliveries =
    options.webhooks &&
    addWebhookDeliveryController(manager, {
      ...shared,
      ...options.webhooks,
      controlNamespace,
      installationKey,
    });
  const lakeNotifications =
    options.lakeNotificationQueues &&
    addLakeNotificationsController(manager, {
      ...shared,
      queues: options.lakeNotificationQueues,
      installationKey,
    });
  const uploadedFileExpiry =
    objectStore && addUploadedFileExpiryController(manager, { objectStore, logger, registry });
  const added: (AddedController | undefined)[] = [
    organizations,
    agentComputers,
    workspacePools,
    tasks,
    contextLakes,
    webhookDeliveries,
    lakeNotifications,
    uploadedFileExpiry,
  ];

  await manager.start();
  return {
    manager,
    notifyAgentComputer(namespace, name) {
      agentComputers.controller.enqueue({ namespace, name });
    },
    notifyTask(namespace, name) {
      tasks.controller.enqueue({ namespace, name });
    },
    notifyContextLake(namespace, name) {
      contextLakes.controller.enqueue({ namespace, name });
    },
    done: manager.done,
    async stop() {
      await manager.stop();
      for (const controller of added) await controller?.afterStop();
    },
  };
}
