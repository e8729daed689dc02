import { z } from 'zod';
import {
  EgressDenialSchema,
  ModelBudgetSchema,
  ModelUsageSchema,
  ModelUsageTotalsSchema,
  PromptFailureReasonSchema,
  PromptStatusSchema,
  TaskStatusValueSchema,
  VisibilitySchema,
  clientTaskStatus,
  promptEntryOf,
  promptStatusOf,
} from '../crds/index.js';
import type { PromptSpec, PromptStatusEntry, Task } from '../crds/index.js';

/**
 * The task record of docs/api.md#tasks, shared by the API (responses) and the operator (webhook
 * deliveries carry it without prompts).
 */

/** docs/api.md: timestamps are ISO 8601 UTC with milliseconds. Kubernetes writes seconds. */
const isoMillis = (time: string): string => new Date(time).toISOString();

/** One prompt of the task record (docs/api.md#tasks); `prompt` is its text. */
export const PromptRecordSchema = z.object({
  id: z.uuid(),
  status: PromptStatusSchema,
  prompt: z.string(),
  submittedAt: z.string(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  finalResult: z.string().nullable(),
  error: z.string().nullable(),
  /** Seq of this prompt's last event so far (null before its first): resume its stream after it. */
  lastSeq: z.number().int().nullable(),
  /** What the model gateway counted for this prompt (null: no model call went through it). */
  usage: ModelUsageSchema.nullable(),
  /** A machine-readable cause of a failure (budget_exceeded), null when none. */
  failureReason: PromptFailureReasonSchema.nullable(),
});
export type PromptRecord = z.infer<typeof PromptRecordSchema>;

/** A list item carries the prompts' progress but never their texts (docs/api.md#tasks). */
export const PromptListRecordSchema = PromptRecordSchema.omit({ prompt: true });

const taskRecordFields = {
  /** A UUID; the name of a Task made with kubectl. */
  id: z.string(),
  url: z.string(),
  status: TaskStatusValueSchema,
  title: z.string(),
  executor: z.string(),
  model: z.string().nullable(),
  workspaceId: z.string(),
  visibility: VisibilitySchema,
  shareUrl: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
  finalResult: z.string().nullable(),
  /** The task's model spending limit (POST /tasks `budget`), null when it has none. */
  budget: ModelBudgetSchema.nullable(),
  /** What the model gateway counted for all the task's prompts, per model too; null before any call. */
  usage: ModelUsageTotalsSchema.omit({ updatedAt: true }).nullable(),
  /** Connections the egress proxy refused for the task, one entry per host, port and reason. */
  egressDenials: z.array(EgressDenialSchema),
};

/** The task record of docs/api.md#tasks (GET /tasks/:id, cancel, the share link). */
export const TaskRecordSchema = z.object({ ...taskRecordFields, prompts: z.array(PromptRecordSchema) });
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** The record as GET /tasks lists it: the same, without prompt texts. */
export const TaskListItemSchema = z.object({ ...taskRecordFields, prompts: z.array(PromptListRecordSchema) });
export type TaskListItem = z.infer<typeof TaskListItemSchema>;

export interface TaskPresentation {
  /** Base URL clients reach the API at (no trailing slash, no /v1). */
  publicUrl: string;
  /** The share link of a share id (the token is derived with the installation key). */
  shareUrl: (shareId: string) => string;
}

const millisOrNull = (time: string | undefined): string | null =>
  time === undefined ? null : isoMillis(time);

/**
 * When the task was made: its first prompt's submission time, written by the API with milliseconds
 * (Kubernetes' creationTimestamp has whole seconds, too coarse for newest-first order).
 */
export function taskCreatedAt(task: Task): string {
  const time = task.spec.prompts[0]?.submittedAt ?? task.metadata.creationTimestamp;
  return time === undefined ? new Date(0).toISOString() : isoMillis(time);
}

/** Newest first by creation time; ties by name, so pages are stable. */
export const newestTaskFirst = (a: Task, b: Task): number =>
  taskCreatedAt(b).localeCompare(taskCreatedAt(a)) || a.metadata.name.localeCompare(b.metadata.name);

/** A prompt canceled by request reads canceled at once; its request time stands in until the operator records the end. */
function promptRecord(prompt: PromptSpec, entry: PromptStatusEntry | undefined): PromptRecord {
  const status = promptStatusOf(prompt, entry);
  const completedAt = entry?.completedAt ?? (status === 'canceled' ? prompt.cancelRequestedAt : undefined);
  return {
    id: prompt.id,
    status,
    prompt: prompt.text,
    submittedAt: isoMillis(prompt.submittedAt),
    startedAt: millisOrNull(entry?.startedAt),
    completedAt: millisOrNull(completedAt),
    ...outcomeFields(entry),
  };
}

/** What the operator and the model gateway recorded of a prompt's run. */
function outcomeFields(
  entry: PromptStatusEntry | undefined,
): Pick<PromptRecord, 'finalResult' | 'error' | 'lastSeq' | 'usage' | 'failureReason'> {
  return {
    finalResult: entry?.finalResult ?? null,
    error: entry?.error ?? null,
    lastSeq: entry?.lastSeq === undefined || entry.lastSeq < 0 ? null : entry.lastSeq,
    usage: entry?.usage ?? null,
    failureReason: entry?.failureReason ?? null,
  };
}

/**
 * The task's budget, what the model gateway counted (without when it last added to it) and what
 * the egress proxy refused (docs/adr/0009).
 */
function modelAccessFields(task: Task): Pick<TaskRecord, 'budget' | 'usage' | 'egressDenials'> {
  return {
    budget: task.spec.budget ?? null,
    usage: usageTotals(task),
    egressDenials: task.status?.egressDenials ?? [],
  };
}

function usageTotals(task: Task): TaskRecord['usage'] {
  const usage = task.status?.usage;
  if (usage === undefined) return null;
  const { updatedAt: _updatedAt, ...totals } = usage;
  return totals;
}

const latest = (times: readonly (string | null | undefined)[]): string | undefined =>
  times
    .filter((time): time is string => typeof time === 'string')
    .map(isoMillis)
    .sort()
    .at(-1);

export function presentTask(task: Task, presentation: TaskPresentation): TaskRecord {
  const prompts = task.spec.prompts.map((prompt) => promptRecord(prompt, promptEntryOf(task, prompt.id)));
  const status = clientTaskStatus(task);
  const createdAt = taskCreatedAt(task);
  const last = prompts.at(-1);
  const shareId = task.spec.visibility === 'public' ? task.spec.shareId : undefined;
  // The last prompt's end; the operator's own record counts too (a cancel it ended without the runner).
  const completedAt =
    status === 'running'
      ? null
      : (latest([task.status?.completedAt, ...prompts.map((p) => p.completedAt)]) ?? null);
  return {
    id: task.metadata.name,
    url: `${presentation.publicUrl}/v1/tasks/${task.metadata.name}`,
    status,
    title: task.spec.title,
    executor: task.spec.executor,
    model: task.spec.model ?? null,
    workspaceId: task.spec.workspace,
    visibility: task.spec.visibility,
    shareUrl: shareId === undefined ? null : presentation.shareUrl(shareId),
    createdAt,
    updatedAt:
      latest([
        createdAt,
        completedAt,
        ...task.spec.prompts.map((p) => p.cancelRequestedAt),
        ...prompts.flatMap((p) => [p.submittedAt, p.startedAt, p.completedAt]),
      ]) ?? createdAt,
    completedAt,
    finalResult: last?.finalResult ?? null,
    ...modelAccessFields(task),
    prompts,
  };
}

/** The list item of a task record: the same, without prompt texts. */
export const taskListItemOf = (record: TaskRecord): TaskListItem => ({
  ...record,
  prompts: record.prompts.map(({ prompt: _text, ...rest }) => rest),
});

export const presentTaskListItem = (task: Task, presentation: TaskPresentation): TaskListItem =>
  taskListItemOf(presentTask(task, presentation));
