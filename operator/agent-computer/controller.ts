import { AgentComputerType, MANAGED_BY_AGENTRY_SELECTOR, TaskType } from '../../crds/index.js';
import type { AgentComputer, Task } from '../../crds/index.js';
import type { AddController, ReconcilerControllerDeps } from '../controller/index.js';
import { workloadOwnedTypes } from '../runtimes/owned-types.js';
import { tasksByWorkspace } from '../task/workspace-index.js';
import { AgentComputerReconciler } from './reconciler.js';
import type { AgentComputerReconcilerOptions } from './reconciler.js';

/** Parallel reconciles of agent computers unless the operator says otherwise. */
export const AGENT_COMPUTER_WORKERS = 16;

export type AgentComputerControllerDeps = ReconcilerControllerDeps<
  AgentComputerReconcilerOptions,
  'tasksOf' | 'caches'
>;

/**
 * The `agentcomputer` controller, woken by its agent computers, their workloads' objects and their
 * tasks: a task's prompts keep its workspace from idling, and their end restarts the idle clock.
 * Default 16 workers: a reconcile mostly waits on its workload's API calls, and at 100 workspaces
 * on a KWOK cluster 16 brought the median workspace ready sooner than 4 (docs/benchmarks.md).
 */
export const addAgentComputerController: AddController<AgentComputerControllerDeps, AgentComputer> = (
  manager,
  deps,
) => {
  const tasksOfWorkspace = tasksByWorkspace(manager);
  const controller = manager.add({
    name: 'agentcomputer',
    for: AgentComputerType,
    owns: workloadOwnedTypes(deps.runtimes),
    // The runtimes label all they make (workloadLabels): no cluster-wide Pods, Secrets, PVCs.
    ownedSelector: MANAGED_BY_AGENTRY_SELECTOR,
    watches: [
      {
        type: TaskType,
        map: (task: Task) => [{ namespace: task.metadata.namespace, name: task.spec.workspace }],
      },
    ],
    reconciler: new AgentComputerReconciler({
      store: deps.store,
      caches: manager.caches,
      tasksOf: (namespace, workspace) => tasksOfWorkspace.list(namespace, workspace),
      events: deps.events,
      logger: deps.logger.child({ controller: 'agentcomputer' }),
      runtimes: deps.runtimes,
      defaultRuntime: deps.defaultRuntime,
      installationKey: deps.installationKey,
      objectStore: deps.objectStore,
      connections: deps.connections,
    }),
    workers: deps.workers ?? AGENT_COMPUTER_WORKERS,
  });
  // The kept runner connections' timers stop with the controller.
  return {
    controller,
    afterStop: () => {
      deps.connections?.close();
      return Promise.resolve();
    },
  };
};
