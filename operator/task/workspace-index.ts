import { TaskType } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import type { CacheIndex } from '../controller/cache-index.js';
import type { ControllerManager } from '../controller/manager.js';

/** The name of the Task cache's index by workspace, shared by every controller asking for it. */
export const TASKS_BY_WORKSPACE = 'workspace';

/** What the index groups Tasks by: the workspace (AgentComputer) each runs on. */
export const workspaceOfTask = (task: Task): string => task.spec.workspace;

/**
 * The Task cache's index by workspace: a workspace's Tasks by lookup, not a scan of its namespace's
 * Tasks (quadratic over many workspaces). One index however many controllers ask; before `start`.
 */
export const tasksByWorkspace = (manager: ControllerManager): CacheIndex<Task> =>
  manager.index(TaskType, TASKS_BY_WORKSPACE, workspaceOfTask);
