import { TaskConditions, isTerminal } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import { entriesOf } from '../task/prompt-progress.js';
import { findCondition } from '../../crds/conditions.js';

/** What the tasks on one workspace say about its use, for idle hibernation. */
export interface WorkspaceActivity {
  /**
   * A prompt waits or runs on it, or a finished prompt's events and artifacts are not yet in object
   * storage (hibernating now would strand them on the sleeping disk): never idle then.
   */
  busy: boolean;
  /** The latest prompt submission, start or end on it. */
  lastAt: string | undefined;
}

/** Computed from the Tasks naming the workspace (level-based: no activity bookkeeping to lose). */
export function workspaceActivity(tasks: readonly Task[], workspace: string): WorkspaceActivity {
  let busy = false;
  const times: string[] = [];
  for (const task of tasks) {
    if (task.spec.workspace !== workspace) continue;
    const entries = entriesOf(task);
    busy ||= entries.some((entry) => !isTerminal(entry.status));
    busy ||= findCondition(task.status?.conditions, TaskConditions.Archived)?.status === 'False';
    times.push(...task.spec.prompts.map((prompt) => prompt.submittedAt));
    for (const entry of entries)
      times.push(...[entry.startedAt, entry.completedAt].filter((t) => t !== undefined));
  }
  return { busy, lastAt: times.sort((a, b) => Date.parse(a) - Date.parse(b)).at(-1) };
}
