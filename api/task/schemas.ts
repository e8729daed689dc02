import { z } from 'zod';
import {
  MAX_PROMPT_LENGTH,
  ModelBudgetSchema,
  TaskStatusValueSchema,
  VisibilitySchema,
  executorName,
} from '../../crds/index.js';
import { ExecutorEnvSchema } from '../../platform/executor-env.js';
import { ResourceIdSchema } from '../ids.js';
import { PaginationQuerySchema } from '../pagination.js';

/**
 * Request and response shapes of the task API (docs/api.md#tasks), declared once: they validate
 * requests and generate the OpenAPI document.
 */

const taskId = z.string().describe("The task's id");
export const TaskIdParamsSchema = z.object({ id: taskId });
export const PromptIdParamsSchema = z.object({
  id: taskId,
  promptId: z.string().describe("The prompt's id"),
});

const promptText = z.string().min(1).max(MAX_PROMPT_LENGTH);

/**
 * Where an uploaded file lands under /code: a relative path that cannot climb out of it
 * (same rule as artifact names, docs/api.md#files-and-artifacts).
 */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

const relativeFilename = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (name) =>
      !name.startsWith('/') &&
      !name.includes('\\') &&
      !hasControlCharacter(name) &&
      !name.split('/').some((part) => part === '..' || part === '.' || part === ''),
    'must be a relative path without "..", "." or empty segments, backslashes or control characters',
  );

const filesField = z
  .array(z.strictObject({ id: z.uuid(), filename: relativeFilename }))
  .max(100)
  .optional();
const skillsField = z.array(z.string().min(1).max(200)).max(100).optional();
const modelField = z.string().min(1).max(200).optional();

/** GitHub's `owner/repo`: an account name, then a repository name that is not `.` or `..`. */
const GITHUB_SHORTHAND = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/(?!\.{1,2}$)[A-Za-z0-9._-]{1,100}$/;

function isHttpsUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.hostname !== '';
}

/** `owner/repo` (GitHub) or an https URL of a git repository. */
const githubUrlField = z
  .string()
  .max(2048)
  .refine(
    (value) => GITHUB_SHORTHAND.test(value) || isHttpsUrl(value),
    'must be owner/repo or an https git URL',
  )
  // The URL is stored in the Task resource and shown in logs: a token in it would leak there.
  .refine(
    (value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''),
    'must not carry credentials; give the workspace access to the repository instead',
  );

/** The clone URL of a githubUrl: the shorthand names a GitHub repository. */
export const cloneUrlOf = (githubUrl: string): string =>
  GITHUB_SHORTHAND.test(githubUrl) ? `https://github.com/${githubUrl}` : githubUrl;

/** A git branch name, as `git check-ref-format --branch` accepts it (roughly), and never an option. */
const branchField = z
  .string()
  .min(1)
  .max(255)
  .refine(
    (name) =>
      !name.startsWith('-') &&
      !name.startsWith('/') &&
      !name.endsWith('/') &&
      !name.endsWith('.') &&
      !name.endsWith('.lock') &&
      !['..', '@{', '//'].some((bad) => name.includes(bad)) &&
      !/[\s~^:?*[\\]/.test(name) &&
      !hasControlCharacter(name),
    'must be a git branch name',
  );

/** POST /tasks (docs/api.md#tasks table). Unknown fields are rejected. */
export const CreateTaskBodySchema = z.strictObject({
  prompt: promptText,
  executor: executorName.optional(),
  model: modelField,
  workspaceId: ResourceIdSchema.optional(),
  files: filesField,
  skills: skillsField,
  githubUrl: githubUrlField.optional(),
  branchName: branchField.optional(),
  visibility: VisibilitySchema.optional(),
  title: z.string().trim().min(1).max(200).optional(),
  /** Executor environment for this task's prompts; kept in a Secret, never echoed. */
  env: ExecutorEnvSchema.optional(),
  /** The task's model spending limit (spec.budget); its prompts fail with budget_exceeded once it is reached. */
  budget: z
    .strictObject(ModelBudgetSchema.shape)
    .describe(ModelBudgetSchema.description ?? '')
    .optional(),
});
export type CreateTaskBody = z.infer<typeof CreateTaskBodySchema>;

/** POST /tasks/:id/prompts. */
export const AddPromptBodySchema = z.strictObject({
  prompt: promptText,
  skills: skillsField,
  files: filesField,
  executor: executorName.optional(),
  model: modelField,
});
export type AddPromptBody = z.infer<typeof AddPromptBodySchema>;

/** PATCH /tasks/:id/visibility. */
export const VisibilityBodySchema = z.strictObject({ visibility: VisibilitySchema });

/** GET /tasks: the list envelope's paging plus two filters. */
export const ListTasksQuerySchema = PaginationQuerySchema.extend({
  status: TaskStatusValueSchema.optional().describe('Only the tasks in this status'),
  workspaceId: ResourceIdSchema.optional().describe('Only the tasks of this workspace'),
});

/**
 * GET /tasks/:id/events: resume point and prompt filter (`Last-Event-ID` may also give the point).
 * Without any of them the stream is the latest prompt's, as the hosted service streams it;
 * `all=true` (or `after=-1`) replays the whole task.
 */
export const TaskEventsQuerySchema = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(-1)
    .optional()
    .describe('Send the events after this seq, task-wide (-1: from the start); as Last-Event-ID'),
  promptId: z.uuid().optional().describe("Follow this prompt's events only"),
  all: z
    .enum(['true', 'false'])
    .optional()
    .describe('true replays the whole task rather than the latest prompt')
    .transform((value) => value === 'true'),
});

export const CreatedTaskSchema = z.object({
  id: z.string(),
  workspaceId: z.string(),
  url: z.string(),
  status: z.literal('running'),
  createdAt: z.string(),
});

export const CreatedPromptSchema = z.object({ promptId: z.uuid() });

export const VisibilityResultSchema = z.object({
  visibility: VisibilitySchema,
  shareUrl: z.string().nullable(),
});

/** One execution event (docs/api.md#tasks), as the runner logged it. */
export const TaskEventRecordSchema = z.object({
  seq: z.number().int(),
  timestamp: z.string(),
  promptId: z.string(),
  eventType: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

/** The `data` of the stream's closing `done` frame (api/task/event-stream.ts). */
export const TaskStreamDoneSchema = z.object({
  status: TaskStatusValueSchema,
  /** The highest seq the stream covers (-1: none). */
  lastSeq: z.number().int(),
  finalResult: z.string().nullable(),
});

/**
 * One server-sent frame of GET /tasks/:id/events, by its fields: `event: event` with `id` (the
 * seq, for Last-Event-ID) and a task event as `data`, or the closing `event: done`. The stream
 * also carries `: keepalive` comments, which carry nothing.
 */
export const TaskStreamFrameSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('event'), id: z.string(), data: TaskEventRecordSchema }),
  z.object({ event: z.literal('done'), data: TaskStreamDoneSchema }),
]);

export const PromptEventsSchema = z.object({
  events: z.array(TaskEventRecordSchema),
  lastSeq: z.number().int(),
});
