import { TaskConditions, TaskReasons, isTerminal, taskStatusOf } from '../../crds/index.js';
import type { Condition, PromptStatusEntry, Task, TaskStatus } from '../../crds/index.js';
import type { PromptState } from '../../platform/runner-protocol.js';
import { setCondition } from '../../crds/conditions.js';

/** Task status records a prompt's final answer up to this many characters (etcd objects stay small). */
const MAX_FINAL_RESULT = 100_000;
const MAX_ERROR = 4096;

const clip = (text: string | undefined, max: number): string | undefined =>
  text === undefined ? undefined : text.length <= max ? text : text.slice(text.length - max);

/** A prompt entry never moves backwards: a terminal entry stays as recorded. */
export function withRunnerState(entry: PromptStatusEntry, state: PromptState): PromptStatusEntry {
  if (isTerminal(entry.status)) return entry;
  return dropUndefined({
    ...entry,
    status: state.status,
    startedAt: state.startedAt ?? entry.startedAt,
    completedAt: state.completedAt,
    lastSeq: Math.max(state.lastSeq, entry.lastSeq ?? -1),
    finalResult: clip(state.finalResult, MAX_FINAL_RESULT),
    error: clip(state.error, MAX_ERROR),
  });
}

/** Ends a prompt without the runner's word (never dispatched, workspace gone, time limit). */
export function endedEntry(
  entry: PromptStatusEntry,
  status: 'failed' | 'canceled',
  now: Date,
  error?: string,
): PromptStatusEntry {
  if (isTerminal(entry.status)) return entry;
  return dropUndefined({ ...entry, status, completedAt: now.toISOString(), error: clip(error, MAX_ERROR) });
}

/** Ends a prompt that reached a budget (docs/adr/0009): failed, with the machine-readable reason. */
export function budgetFailedEntry(entry: PromptStatusEntry, now: Date, error: string): PromptStatusEntry {
  if (isTerminal(entry.status)) return entry;
  return { ...endedEntry(entry, 'failed', now, error), failureReason: 'budget_exceeded' };
}

/** Optional fields set to undefined are dropped, so a status round-trips unchanged through the store. */
function dropUndefined(entry: {
  [K in keyof PromptStatusEntry]: PromptStatusEntry[K] | undefined;
}): PromptStatusEntry {
  const kept = Object.entries(entry as Record<string, unknown>).filter(([, value]) => value !== undefined);
  return Object.fromEntries(kept) as PromptStatusEntry; // same keys, minus absent ones
}

/** Entries for every prompt of the spec, in spec order; a prompt not seen yet is pending. */
export function entriesOf(task: Task): PromptStatusEntry[] {
  const known = new Map((task.status?.prompts ?? []).map((entry) => [entry.id, entry]));
  return task.spec.prompts.map((prompt) => known.get(prompt.id) ?? { id: prompt.id, status: 'pending' });
}

export interface WorkspaceView {
  reason:
    | typeof TaskReasons.WorkspaceReady
    | typeof TaskReasons.WorkspaceStarting
    | typeof TaskReasons.WorkspaceMissing
    | typeof TaskReasons.WorkspaceClaimLost;
  message: string;
}

/**
 * The Task status for these prompt entries: derived status, completion time, and conditions with
 * observedGeneration. The outbox and anything else already there is kept.
 */
export function computeTaskStatus(
  task: Task,
  entries: readonly PromptStatusEntry[],
  workspace: WorkspaceView,
  now: Date,
): TaskStatus {
  const status = taskStatusOf(entries.map((entry) => entry.status));
  const finished = status !== 'running';
  const completedAt = finished
    ? (task.status?.completedAt ?? latest(entries.map((e) => e.completedAt)) ?? now.toISOString())
    : undefined;
  const generation = task.metadata.generation;
  let conditions: Condition[] = task.status?.conditions ?? [];
  conditions = setCondition(
    conditions,
    {
      type: TaskConditions.WorkspaceReady,
      status: workspace.reason === TaskReasons.WorkspaceReady ? 'True' : 'False',
      reason: workspace.reason,
      message: workspace.message,
    },
    generation,
    now,
  );
  const waiting = entries.filter((entry) => entry.status === 'pending' && entry.dispatchedAt === undefined);
  conditions = setCondition(
    conditions,
    {
      type: TaskConditions.Dispatched,
      status: waiting.length === 0 ? 'True' : 'False',
      reason: waiting.length === 0 ? TaskReasons.Dispatched : TaskReasons.Waiting,
      message:
        waiting.length === 0
          ? 'every prompt reached the runner'
          : `${waiting.length} prompt(s) wait for the workspace`,
    },
    generation,
    now,
  );
  const next: TaskStatus = {
    ...task.status,
    observedGeneration: generation,
    status,
    prompts: [...entries],
    conditions,
  };
  if (completedAt === undefined) delete next.completedAt;
  else next.completedAt = completedAt;
  return next;
}

function latest(times: readonly (string | undefined)[]): string | undefined {
  return times
    .filter((time): time is string => time !== undefined)
    .sort()
    .at(-1);
}
