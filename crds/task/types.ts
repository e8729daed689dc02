import { z } from 'zod';
import { ConditionsSchema, GROUP, VERSION, isoTimestamp } from '../meta.js';
import { executorName } from '../organization/types.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';

/** docs/api.md#limits: one prompt is at most 100,000 characters. */
export const MAX_PROMPT_LENGTH = 100_000;

export const VisibilitySchema = z.enum(['private', 'shared', 'public']);
export type Visibility = z.infer<typeof VisibilitySchema>;

export const PromptStatusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'canceled']);
export type PromptStatus = z.infer<typeof PromptStatusSchema>;

export const TaskStatusValueSchema = z.enum(['running', 'completed', 'failed', 'canceled']);
export type TaskStatusValue = z.infer<typeof TaskStatusValueSchema>;

/** A file uploaded through POST /files, copied to /code/<filename> before the prompt runs. */
export const PromptFileSchema = z.object({
  id: z.uuid(),
  filename: z.string().min(1).max(1024),
});

const skillName = z.string().min(1).max(200);

/** A prompt as the client sent it: intent, never rewritten by the operator. */
export const PromptSpecSchema = z.object({
  id: z.uuid(),
  text: z.string().min(1).max(MAX_PROMPT_LENGTH),
  files: z.array(PromptFileSchema).max(100).optional(),
  skills: z.array(skillName).max(100).optional(),
  /** Overrides of the task's executor and model for this prompt. */
  executor: executorName.optional(),
  model: z.string().max(200).optional(),
  submittedAt: isoTimestamp,
  cancelRequestedAt: isoTimestamp.optional(),
});
export type PromptSpec = z.infer<typeof PromptSpecSchema>;

/** The Secret holding a task's executor environment; the Task owns it. */
export const taskEnvSecretName = (name: string): string => `task-env-${name}`;

export const TaskSpecSchema = z.object({
  /** Name of the AgentComputer the task runs on. */
  workspace: z.string().min(1).max(253),
  executor: executorName,
  model: z.string().max(200).optional(),
  title: z.string().min(1).max(200),
  /** The user (API key owner) who made it; `private` tasks are visible to this user only. */
  owner: z.string().min(1).max(253),
  visibility: VisibilitySchema.default('shared'),
  githubUrl: z.string().max(2048).optional(),
  branch: z.string().max(255).optional(),
  skills: z.array(skillName).max(100).optional(),
  prompts: z.array(PromptSpecSchema).min(1).max(1000),
  /**
   * Set while visibility is `public`: the share link's token is derived from it with the
   * installation key, so the resource holds no credential; a new one kills old links.
   */
  shareId: z.uuid().optional(),
  /** Names of the task's executor environment (POST /tasks `env`), held in the Secret `taskEnvSecretName(name)`. */
  envNames: z.array(z.string().min(1).max(128)).max(100).optional(),
  /** Soft delete: set once; the task answers 404 from then on and is purged after retention. */
  deletedAt: isoTimestamp.optional(),
});
export type TaskSpec = z.infer<typeof TaskSpecSchema>;

/** What the operator observed of one prompt (matched to the spec by id). */
export const PromptStatusEntrySchema = z.object({
  id: z.uuid(),
  status: PromptStatusSchema,
  /** When the runner accepted it (idempotent by prompt id, so a retry after a crash is harmless). */
  dispatchedAt: isoTimestamp.optional(),
  startedAt: isoTimestamp.optional(),
  completedAt: isoTimestamp.optional(),
  /** Highest event sequence number recorded for this prompt; dispatch resumes after it. */
  lastSeq: z.number().int().min(-1).optional(),
  finalResult: z.string().max(100_000).optional(),
  error: z.string().max(4096).optional(),
  /** When the prompt's events were archived to object storage (set once it is terminal). */
  archivedAt: isoTimestamp.optional(),
  /** When /code/artifacts was synced with object storage after the prompt ended. */
  artifactsSyncedAt: isoTimestamp.optional(),
});
export type PromptStatusEntry = z.infer<typeof PromptStatusEntrySchema>;

export const WebhookEventTypeSchema = z.enum([
  'task.created',
  'task.running',
  'task.completed',
  'task.failed',
  'task.canceled',
]);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/** A webhook delivery owed: written in the same status patch as the transition (transactional outbox). */
export const OutboxEntrySchema = z.object({
  id: z.uuid(),
  webhook: z.string().min(1).max(253),
  event: WebhookEventTypeSchema,
  occurredAt: isoTimestamp,
  attempts: z.number().int().min(0).default(0),
  nextAttemptAt: isoTimestamp.optional(),
  lastError: z.string().max(1024).optional(),
});
export type OutboxEntry = z.infer<typeof OutboxEntrySchema>;

/**
 * Condition types of a Task.
 * - WorkspaceReady: the AgentComputer is Ready. Reasons: WorkspaceReady, WorkspaceStarting, WorkspaceMissing.
 * - Dispatched: the newest prompt reached the runner. Reasons: Dispatched, Waiting, DispatchFailed.
 * - Archived: every finished prompt's events and the artifacts it left are in object storage.
 *   True (Archived), or False while that is owed (ArchivePending: waiting for the workspace;
 *   ArchiveFailed: the last try failed, retried with back-off). Absent when the installation has no
 *   object storage. While False, the workspace is not idle (it must not hibernate with it owed).
 */
export const TaskConditions = {
  WorkspaceReady: 'WorkspaceReady',
  Dispatched: 'Dispatched',
  Archived: 'Archived',
} as const;

export const TaskStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  /** Derived from the prompts (docs/api.md#tasks); kept for printer columns and webhooks. */
  status: TaskStatusValueSchema.optional(),
  prompts: z.array(PromptStatusEntrySchema).max(1000).optional(),
  completedAt: isoTimestamp.optional(),
  outbox: z.array(OutboxEntrySchema).max(500).optional(),
  conditions: ConditionsSchema.optional(),
});
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const TaskType = defineCustomResource({
  group: GROUP,
  version: VERSION,
  kind: 'Task',
  plural: 'tasks',
  singular: 'task',
  namespaced: true,
  shortNames: ['atask', 'atasks'],
  description: 'A coding-agent task: its prompts (intent) and what became of each (status).',
  spec: TaskSpecSchema,
  status: TaskStatusSchema,
  printerColumns: [
    { name: 'Title', type: 'string', jsonPath: '.spec.title' },
    { name: 'Executor', type: 'string', jsonPath: '.spec.executor' },
    { name: 'Workspace', type: 'string', jsonPath: '.spec.workspace', priority: 1 },
    { name: 'Status', type: 'string', jsonPath: '.status.status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
export type Task = CustomResource<TaskSpec, TaskStatus>;
