import type { AgentComputer, Task } from '../../crds/index.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { TaskPresentation } from './present.js';
import type { ReadModel } from '../read-model.js';
import type { WorkspacePoolClaims } from '../workspace-pool/claim.js';

/** What the task routes need; ApiAppOptions provides it. */
export interface TaskRoutesDeps {
  store: ResourceStore;
  readModel: ReadModel;
  /** Base URL clients reach this server at (no trailing slash, no /v1). */
  publicUrl: string;
  installationKey: InstallationKey;
  executors: ExecutorCatalog;
  now: () => Date;
  /** Interval of the `: keepalive` comment on event streams (docs/api.md#tasks: 15 s). */
  sseKeepaliveMs: number;
  /** Warm-pool claims for a task without workspaceId (one per app: it knows this process's claims). */
  poolClaims: WorkspacePoolClaims;
  /** Archived prompt events (the operator writes them there); without it only runners are read. */
  objectStore?: ObjectStore | undefined;
}

export const taskPresentation = (
  deps: Pick<TaskRoutesDeps, 'publicUrl' | 'installationKey'>,
): TaskPresentation => ({
  publicUrl: deps.publicUrl,
  shareUrl: (shareId) => `${deps.publicUrl}/v1/share/${deps.installationKey.shareToken(shareId)}`,
});

/** A soft-deleted task (or one Kubernetes is removing) answers 404 everywhere (docs/api.md#tasks). */
export const isDeleted = (task: Task): boolean =>
  task.spec.deletedAt !== undefined || task.metadata.deletionTimestamp !== undefined;

/**
 * Whether the caller may see the task: it lives in the caller's namespace (another organization's
 * is never even looked up), is not deleted, and is not someone else's `private` task.
 */
export const visibleTo = (task: Task, principal: Pick<Principal, 'namespace' | 'user'>): boolean =>
  task.metadata.namespace === principal.namespace &&
  !isDeleted(task) &&
  (task.spec.visibility !== 'private' || task.spec.owner === principal.user);

export const taskNotFound = (): ApiError => ApiError.notFound('Task');

/** The task (cached, or just created by another replica), or 404 for anything the caller may not see. */
export async function findTask(readModel: ReadModel, principal: Principal, id: string): Promise<Task> {
  const task = await readModel.taskReadThrough(principal.namespace, id);
  if (task === undefined || !visibleTo(task, principal)) throw taskNotFound();
  return task;
}

/**
 * How long a stream follows the copy findTask read from the store while this replica's watch has
 * not delivered the task yet (it was created through another API replica a moment ago).
 */
export const READ_THROUGH_GRACE_MS = 30_000;

/**
 * The task as a long-lived reader (an event stream) sees it from now on: as cached, and undefined
 * once it is gone or no longer visible to the principal. Until the cache has had it, the copy
 * `found` (read through to the store), for at most READ_THROUGH_GRACE_MS: a client that creates a
 * task through one replica and opens its stream on another follows the task rather than seeing it
 * end at once. (The stream reads it on every change of the task, so a deletion after the cache
 * had it is seen.)
 */
export function taskAsCached(
  readModel: ReadModel,
  principal: Pick<Principal, 'namespace' | 'user'>,
  found: Task,
  now: () => number = Date.now,
): () => Task | undefined {
  const { name } = found.metadata;
  const graceEnds = now() + READ_THROUGH_GRACE_MS;
  let cached = false;
  return () => {
    const latest = readModel.tasks.get(principal.namespace, name);
    if (latest !== undefined) {
      cached = true;
      return visibleTo(latest, principal) ? latest : undefined;
    }
    return !cached && now() < graceEnds ? found : undefined;
  };
}

/** findTask without a promise when the task is cached, as it nearly always is (GET /v1/tasks/:id). */
export function findTaskSoon(readModel: ReadModel, principal: Principal, id: string): Task | Promise<Task> {
  const cached = readModel.tasks.get(principal.namespace, id);
  if (cached === undefined) return findTask(readModel, principal, id);
  if (!visibleTo(cached, principal)) throw taskNotFound();
  return cached;
}

/** Re-checks access on the fresh copy a read-modify-write read (a delete may have won meanwhile). */
export function assertVisible(task: Task, principal: Principal): void {
  if (!visibleTo(task, principal)) throw taskNotFound();
}

/** The task's workspace as cached, unless it is gone or being deleted. */
export function workspaceOf(readModel: ReadModel, task: Task): AgentComputer | undefined {
  const ac = readModel.agentComputers.get(task.metadata.namespace, task.spec.workspace);
  return ac?.metadata.deletionTimestamp === undefined ? ac : undefined;
}
