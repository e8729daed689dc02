import { AgentComputerType, TaskType } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { taskEventsPrefix } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';

/** Soft-deleted tasks are kept this long (hidden from the API), then removed. */
export const DEFAULT_DELETED_RETENTION_MS = 7 * 24 * 3_600_000;

/** When a soft-deleted task is due to be removed for good; undefined while it is not deleted. */
export function purgeAt(task: Task, retentionMs: number): number | undefined {
  const deletedAt = task.spec.deletedAt;
  return deletedAt === undefined ? undefined : Date.parse(deletedAt) + retentionMs;
}

export interface TaskPurgeOptions {
  store: ResourceStore;
  logger: Logger;
  objectStore?: ObjectStore | undefined;
}

/** Removes a soft-deleted task for good, and its ephemeral workspace when no other task uses it. */
export async function purgeTask(options: TaskPurgeOptions, task: Task): Promise<void> {
  const { store } = options;
  const namespace = task.metadata.namespace ?? '';
  // Its archived events first: should that fail, the task is still there to retry the purge.
  await options.objectStore?.deletePrefix(taskEventsPrefix(namespace, task.metadata.name));
  await store
    .delete(TaskType, namespace, task.metadata.name, { uid: task.metadata.uid })
    .catch(ignoreNotFound);
  const workspace = await store.get(AgentComputerType, namespace, task.spec.workspace);
  if (workspace?.spec.ephemeral !== true) return;
  const others = await store.list(TaskType, { namespace });
  const inUse = others.items.some(
    (other) => other.metadata.name !== task.metadata.name && other.spec.workspace === workspace.metadata.name,
  );
  if (inUse) return;
  await store
    .delete(AgentComputerType, namespace, workspace.metadata.name, { uid: workspace.metadata.uid })
    .catch(ignoreNotFound);
  options.logger.info({ task: task.metadata.name, namespace }, 'purged a deleted task and its workspace');
}

function ignoreNotFound(err: unknown): undefined {
  if (isStoreError(err, 'NotFound')) return undefined;
  throw err;
}
