import { z } from 'zod';
import { ConditionsSchema, GROUP, ObservedGenerationSchema, VERSION, isoTimestamp } from '../meta.js';
import { executorName } from '../organization/types.js';
import { conditionsDescription } from '../condition-catalog.js';
import { defineCustomResource } from '../resource.js';
import type { CustomResource } from '../resource.js';
import { TaskConditionCatalog } from './conditions.js';
import { EgressDenialSchema, MAX_EGRESS_DENIALS } from '../egress.js';
import { ModelBudgetSchema, ModelUsageSchema, ModelUsageTotalsSchema } from '../model-usage.js';

/** docs/api.md#limits: one prompt is at most 100,000 characters. */
export const MAX_PROMPT_LENGTH = 100_000;

export const VisibilitySchema = z.enum(['private', 'shared', 'public']);
export type Visibility = z.infer<typeof VisibilitySchema>;

export const PromptStatusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'canceled']);
export type PromptStatus = z.infer<typeof PromptStatusSchema>;

export const TaskStatusValueSchema = z.enum(['running', 'completed', 'failed', 'canceled']);
export type TaskStatusValue = z.infer<typeof TaskStatusValueSchema>;

/** A file uploaded through POST /files, copied into the working directory before the prompt runs. */
export const PromptFileSchema = z.object({
  id: z.uuid().describe('ID of the file uploaded through the REST API (POST /v1/files).'),
  filename: z
    .string()
    .min(1)
    .max(1024)
    .describe(
      'Path, relative to the working directory (/code), the file is copied to before the prompt runs.',
    ),
});

const skillName = z.string().min(1).max(200);

/** A prompt as the client sent it: intent, never rewritten by the operator. */
export const PromptSpecSchema = z.object({
  id: z.uuid().describe('ID of the prompt (a UUID); status.prompts[] refers to it.'),
  text: z
    .string()
    .min(1)
    .max(MAX_PROMPT_LENGTH)
    .describe('What the agent is asked to do, 1-100,000 characters.'),
  files: z
    .array(PromptFileSchema)
    .max(100)
    .optional()
    .describe('Uploaded files copied into the working directory before the prompt runs; at most 100.'),
  skills: z
    .array(skillName)
    .max(100)
    .optional()
    .describe(
      'Skills installed for this prompt: catalog slugs or github:<owner/repo>[#ref] references. Omitted: spec.skills.',
    ),
  executor: executorName
    .optional()
    .describe('Executor for this prompt only (e.g. claude, codex). Omitted: spec.executor.'),
  model: z
    .string()
    .max(200)
    .optional()
    .describe("Model for this prompt only. Omitted: spec.model, else the executor's default model."),
  submittedAt: isoTimestamp.describe('When the prompt was sent (RFC 3339).'),
  cancelRequestedAt: isoTimestamp
    .optional()
    .describe('Set to cancel the prompt: when the cancel was asked for (RFC 3339); the operator stops it.'),
});
export type PromptSpec = z.infer<typeof PromptSpecSchema>;

/** The Secret holding a task's executor environment; the Task owns it. */
export const taskEnvSecretName = (name: string): string => `task-env-${name}`;

export const TaskSpecSchema = z
  .object({
    workspace: z
      .string()
      .min(1)
      .max(253)
      .describe('Name of the AgentComputer (same namespace) the task runs on.'),
    executor: executorName.describe(
      'The agent CLI that runs the prompts: claude, codex, gemini, opencode, shell or one the installation configures.',
    ),
    model: z
      .string()
      .max(200)
      .optional()
      .describe(
        "Model the executor uses, one of its configured models. Omitted: the executor's default model.",
      ),
    title: z.string().min(1).max(200).describe('Title shown to people, 1-200 characters.'),
    owner: z
      .string()
      .min(1)
      .max(253)
      .describe('The user (API key owner) who made the task; a private task is visible to this user only.'),
    visibility: VisibilitySchema.default('shared').describe(
      'Who may see the task: private (its owner), shared (everyone in the organization) or public (also anyone with its share link). Default: shared.',
    ),
    githubUrl: z
      .string()
      .max(2048)
      .optional()
      .describe('Git repository cloned into the working directory (/code) once, before the first prompt.'),
    branch: z
      .string()
      .max(255)
      .optional()
      .describe('Branch of githubUrl to clone; the REST API sets main when a repository is given.'),
    skills: z
      .array(skillName)
      .max(100)
      .optional()
      .describe(
        'Skills of every prompt that names none: catalog slugs or github:<owner/repo>[#ref] references; at most 100.',
      ),
    prompts: z
      .array(PromptSpecSchema)
      .min(1)
      .max(1000)
      .describe(
        'The prompts in the order they were sent (the first, then follow-ups), 1-1,000; run one at a time.',
      ),
    // The share link's token is derived from shareId with the installation key, so the resource
    // holds no credential.
    shareId: z
      .uuid()
      .optional()
      .describe(
        'Set while visibility is public: identifies the share link; a new one invalidates old links.',
      ),
    envNames: z
      .array(z.string().min(1).max(128))
      .max(100)
      .optional()
      .describe(
        'Names of the executor environment variables of this task; their values live only in the Secret task-env-<name> (owned by the Task), never here. At most 100.',
      ),
    deletedAt: isoTimestamp
      .optional()
      .describe(
        'Soft delete: when the task was deleted (RFC 3339). From then on the REST API answers 404 for it; the operator removes it after the retention (AGENTRY_DELETED_TASK_RETENTION, 168h).',
      ),
    budget: ModelBudgetSchema.optional().describe(
      'Model spending limit of the whole task (all prompts); a prompt that reaches it fails with reason budget_exceeded, and later prompts fail at once. Omitted: none (the organization’s still applies).',
    ),
  })
  .describe('Desired state of the task: where and how it runs, and the prompts sent to it.');
export type TaskSpec = z.infer<typeof TaskSpecSchema>;

/** Causes of a failed prompt a client can act on; most failures have none (the error says what happened). */
export const PromptFailureReasonSchema = z.enum(['budget_exceeded']);
export type PromptFailureReason = z.infer<typeof PromptFailureReasonSchema>;

/** What the operator observed of one prompt (matched to the spec by id). */
export const PromptStatusEntrySchema = z.object({
  id: z.uuid().describe('ID of the prompt in spec.prompts[] this entry is about.'),
  status: PromptStatusSchema.describe(
    'State of the prompt: pending, running, succeeded, failed or canceled.',
  ),
  // Dispatch is idempotent by prompt id, so a retry after a crash is harmless.
  dispatchedAt: isoTimestamp.optional().describe('When the runner in the workspace accepted the prompt.'),
  startedAt: isoTimestamp.optional().describe('When the executor started running the prompt.'),
  completedAt: isoTimestamp.optional().describe('When the prompt ended (succeeded, failed or canceled).'),
  lastSeq: z
    .number()
    .int()
    .min(-1)
    .optional()
    .describe(
      'Highest event sequence number recorded for this prompt (-1: none yet); after a restart the operator follows the events from there.',
    ),
  finalResult: z.string().max(100_000).optional().describe("The executor's final answer, when it gave one."),
  error: z.string().max(4096).optional().describe('Why the prompt failed.'),
  failureReason: PromptFailureReasonSchema.optional().describe(
    'A machine-readable cause of the failure, when it has one: budget_exceeded.',
  ),
  usage: ModelUsageSchema.optional().describe(
    "What the model gateway counted for this prompt's model calls.",
  ),
  budgetExceeded: z
    .enum(['task', 'organization'])
    .optional()
    .describe(
      "Set by the model gateway when it refused a call of this prompt because the task's or the organization's budget was reached; the operator then stops the prompt.",
    ),
  archivedAt: isoTimestamp
    .optional()
    .describe("When the prompt's events were archived to object storage (set once it has ended)."),
  artifactsSyncedAt: isoTimestamp
    .optional()
    .describe('When /code/artifacts was synced with object storage after the prompt ended.'),
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
  id: z.uuid().describe('ID of the delivery (its webhook-id header); the same on every retry.'),
  webhook: z.string().min(1).max(253).describe('Name of the Webhook (same namespace) to deliver to.'),
  event: WebhookEventTypeSchema.describe('The task transition to deliver, e.g. task.completed.'),
  occurredAt: isoTimestamp.describe('When the transition happened (RFC 3339).'),
  attempts: z.number().int().min(0).default(0).describe('Failed delivery attempts so far. Default: 0.'),
  nextAttemptAt: isoTimestamp.optional().describe('When the next retry is due, after a failed attempt.'),
  lastError: z.string().max(1024).optional().describe('Why the latest attempt failed.'),
});
export type OutboxEntry = z.infer<typeof OutboxEntrySchema>;

export const TaskStatusSchema = z
  .object({
    observedGeneration: ObservedGenerationSchema.optional(),
    status: TaskStatusValueSchema.optional().describe(
      'State of the task, derived from its prompts: running while any prompt is pending or running, else completed, failed or canceled after the latest prompt.',
    ),
    prompts: z
      .array(PromptStatusEntrySchema)
      .max(1000)
      .optional()
      .describe('What became of each prompt of spec.prompts, matched by id.'),
    completedAt: isoTimestamp
      .optional()
      .describe(
        'When the task stopped running (its latest prompt ended); unset while a prompt is pending or running.',
      ),
    outbox: z
      .array(OutboxEntrySchema)
      .max(500)
      .optional()
      .describe('Webhook deliveries owed for this task, removed once delivered (or given up).'),
    usage: ModelUsageTotalsSchema.optional().describe(
      'What the model gateway counted for all prompts of the task, with a per-model breakdown.',
    ),
    egressDenials: z
      .array(EgressDenialSchema)
      .max(MAX_EGRESS_DENIALS)
      .optional()
      .describe(
        `Connections the egress proxy refused for the task's prompts, one entry per host, port and reason (at most ${MAX_EGRESS_DENIALS}).`,
      ),
    conditions: ConditionsSchema.optional().describe(conditionsDescription(TaskConditionCatalog)),
  })
  .describe(
    'Observed state of the task, written by the operator (usage by the model gateway, egressDenials by the egress proxy).',
  );
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
