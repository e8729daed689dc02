import { clientTaskStatus } from '../../crds/index.js';
import type { Task, TaskStatusValue } from '../../crds/index.js';
import type { Principal } from '../auth/principal.js';
import { bucketKey } from '../list-index.js';
import type { Placement } from '../list-index.js';
import { taskCreatedAt } from './present.js';
import { isDeleted } from './access.js';

/**
 * The lists GET /v1/tasks pages through (see ListIndex). A task is in its audience's list — the
 * organization's (shared and public tasks) or its owner's private one — once alone and once per
 * filter combination (workspace, status, both), so every query is a merge of two ready lists: the
 * organization's and the caller's private one. Running tasks are also counted per organization
 * for the concurrent-task limit. Deleted tasks are in no list.
 */

const ORGANIZATION = 'org';
const privateTo = (user: string): string => `private\u0000${user}`;
const RUNNING = 'running';

export interface TaskListFilter {
  workspaceId?: string | undefined;
  status?: TaskStatusValue | undefined;
}

const filterParts = (filter: TaskListFilter): string[] => [
  ...(filter.workspaceId === undefined ? [] : ['ws', filter.workspaceId]),
  ...(filter.status === undefined ? [] : ['status', filter.status]),
];

export function taskPlacement(task: Task): Placement | undefined {
  if (isDeleted(task)) return undefined;
  const namespace = task.metadata.namespace ?? '';
  const audience = task.spec.visibility === 'private' ? privateTo(task.spec.owner) : ORGANIZATION;
  const status = clientTaskStatus(task);
  const combinations: TaskListFilter[] = [
    {},
    { workspaceId: task.spec.workspace },
    { status },
    { workspaceId: task.spec.workspace, status },
  ];
  const buckets = combinations.map((filter) => bucketKey(namespace, audience, ...filterParts(filter)));
  if (status === 'running') buckets.push(bucketKey(namespace, RUNNING));
  return { createdAt: taskCreatedAt(task), buckets };
}

/** The two lists whose merge is what the caller may see of the organization's tasks, filtered. */
export const taskListBuckets = (
  principal: Pick<Principal, 'namespace' | 'user'>,
  filter: TaskListFilter,
): [string, string] => [
  bucketKey(principal.namespace, ORGANIZATION, ...filterParts(filter)),
  bucketKey(principal.namespace, privateTo(principal.user), ...filterParts(filter)),
];

/** The list of an organization's running tasks (whoever may see them). */
export const runningTasksBucket = (namespace: string): string => bucketKey(namespace, RUNNING);
