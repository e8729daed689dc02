import {
  AgentComputerType,
  ContextLakeType,
  OrganizationType,
  TaskType,
  organizationOfNamespace,
} from '../../crds/index.js';
import type { AgentComputer, Organization, Task } from '../../crds/index.js';
import type { Controller } from '../controller/index.js';
import { withNothingToClose } from '../controller/index.js';
import type { AddController, ReconcilerControllerDeps } from '../controller/index.js';
import { TaskEventFollowers } from './event-followers.js';
import { TaskMetrics } from './metrics.js';
import { TaskReconciler } from './reconciler.js';
import type { TaskReconcilerOptions } from './reconciler.js';
import { UploadedFileExpiryReconciler } from './uploaded-file-expiry.js';
import { tasksByWorkspace } from './workspace-index.js';
import type { UploadedFileExpiryOptions } from './uploaded-file-expiry.js';

export type TaskControllerDeps = ReconcilerControllerDeps<
  TaskReconcilerOptions,
  'followers' | 'metrics' | 'caches'
>;

/**
 * The `task` controller, woken by its tasks, by their workspaces' changes and by the runners' event
 * streams (followed beside the workers, closed after the manager stopped). Default 4 workers.
 */
export const addTaskController: AddController<TaskControllerDeps, Task> = (manager, deps) => {
  const { store, logger, registry, workers, ...reconcilerOptions } = deps;
  const holder: { controller?: Controller<Task> } = {};
  const followers = new TaskEventFollowers({
    logger: logger.child({ component: 'task-events' }),
    onProgress: (namespace, name) => holder.controller?.enqueue({ namespace, name }),
  });
  const tasksOfWorkspace = tasksByWorkspace(manager);
  // Budgets: the organization's is read from this cache (its usage changes do not wake tasks).
  manager.cache(OrganizationType);
  // A dispatch tells the agent about its organization's lake: read here, not from the API server.
  manager.cache(ContextLakeType);
  const controller = manager.add({
    name: 'task',
    for: TaskType,
    watches: [
      {
        type: AgentComputerType,
        // A lookup, not a scan of the namespace's Tasks per AgentComputer event.
        map: (workspace: AgentComputer) =>
          tasksOfWorkspace
            .list(workspace.metadata.namespace, workspace.metadata.name)
            .map((task) => ({ namespace: task.metadata.namespace, name: task.metadata.name })),
      },
    ],
    reconciler: new TaskReconciler({
      ...reconcilerOptions,
      store,
      caches: manager.caches,
      logger: logger.child({ controller: 'task' }),
      followers,
      metrics: new TaskMetrics(registry),
      organizationOf: (namespace) =>
        organizationOfNamespace(manager.caches.list(OrganizationType), namespace),
      tasksOnWorkspace: (namespace, workspace) => tasksOfWorkspace.list(namespace, workspace),
    }),
    workers: workers ?? 4,
  });
  holder.controller = controller;
  return { controller, afterStop: () => followers.stopAll() };
};

/**
 * The `uploaded-file-expiry` controller of organizations: it sweeps each one's unused uploads where
 * controllers run, so only on the leader.
 */
export const addUploadedFileExpiryController: AddController<UploadedFileExpiryOptions, Organization> = (
  manager,
  deps,
) => {
  manager.cache(TaskType);
  const reconciler = new UploadedFileExpiryReconciler(manager.caches, {
    ...deps,
    logger: deps.logger.child({ controller: 'uploaded-file-expiry' }),
  });
  return withNothingToClose(
    manager.add({ name: 'uploaded-file-expiry', for: OrganizationType, reconciler, workers: 1 }),
  );
};
