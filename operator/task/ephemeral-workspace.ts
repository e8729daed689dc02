import {
  AgentComputerEventReasons,
  AgentComputerType,
  HIBERNATED_BY_ANNOTATION,
  isTerminal,
} from '../../crds/index.js';
import type { AgentComputer, PromptStatusEntry, Task } from '../../crds/index.js';
import type { EventRecorder } from '../../platform/events.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { entriesOf } from './prompt-progress.js';

/**
 * Workspaces made for a task (POST /tasks without workspaceId) do not pile up: once no task on one
 * has a pending or running prompt, and every finished prompt is archived, it hibernates (the disk
 * stays, so a follow-up prompt resumes it where it was). A hibernated ephemeral workspace does not
 * count against the organization's agent-computer limit; it is deleted with its task.
 */

/** The hibernated-by annotation's value when the operator put an idle task's workspace to sleep. */
export const TASK_IDLE = 'task-idle';

const owesArchive = (entry: PromptStatusEntry, archiving: boolean): boolean =>
  archiving &&
  isTerminal(entry.status) &&
  (entry.archivedAt === undefined || entry.artifactsSyncedAt === undefined);

const idle = (entries: readonly PromptStatusEntry[], archiving: boolean): boolean =>
  entries.every((entry) => isTerminal(entry.status) && !owesArchive(entry, archiving));

/**
 * How long an idle task's workspace keeps running first: a client that sends a follow-up (or a
 * task on the same workspace) right after a result finds it awake, and no prompt races the stop.
 */
export const DEFAULT_EPHEMERAL_IDLE_GRACE_MS = 60_000;

/**
 * The task's workspace when it is ephemeral, running and idle: `due` once the grace period since
 * the last prompt ended has passed, else the milliseconds left. Undefined: nothing to do.
 */
export function idleEphemeralWorkspace(
  workspace: AgentComputer | undefined,
  entries: readonly PromptStatusEntry[],
  options: { archiving: boolean; graceMs: number; now: Date },
): { workspace: AgentComputer; waitMs: number } | undefined {
  if (workspace?.spec.ephemeral !== true || workspace.spec.operatingMode !== 'Running') return undefined;
  if (workspace.metadata.deletionTimestamp !== undefined || !idle(entries, options.archiving))
    return undefined;
  const ended = Math.max(0, ...entries.map((entry) => Date.parse(entry.completedAt ?? '') || 0));
  return { workspace, waitMs: Math.max(0, ended + options.graceMs - options.now.getTime()) };
}

/**
 * Hibernates the workspace unless another of the tasks on it (`tasksOnWorkspace`) still has a prompt
 * to run; resolves it as written. A task too new to be among them finds the workspace hibernated
 * and resumes it: it costs a restart, never a prompt.
 */
export async function hibernateEphemeralWorkspace(
  store: ResourceStore,
  events: EventRecorder | undefined,
  task: Task,
  workspace: AgentComputer,
  tasksOnWorkspace: readonly Task[],
): Promise<AgentComputer | undefined> {
  const busy = tasksOnWorkspace.some(
    (other) =>
      other.metadata.name !== task.metadata.name &&
      other.spec.workspace === workspace.metadata.name &&
      other.spec.deletedAt === undefined &&
      // From the spec: a task just created has prompts but no status entries yet.
      entriesOf(other).some((entry) => !isTerminal(entry.status)),
  );
  if (busy) return undefined;
  const hibernated = await store.replace(AgentComputerType, {
    ...workspace,
    metadata: {
      ...workspace.metadata,
      annotations: { ...workspace.metadata.annotations, [HIBERNATED_BY_ANNOTATION]: TASK_IDLE },
    },
    spec: { ...workspace.spec, operatingMode: 'Hibernated' },
  });
  await events?.record(
    workspace,
    'Normal',
    AgentComputerEventReasons.WorkspaceHibernated,
    'its task has no prompt to run; hibernating',
  );
  return hibernated;
}
