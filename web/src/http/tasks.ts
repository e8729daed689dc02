import * as z from 'zod/mini';
import { request } from './client.js';

/**
 * The task API as the pages use it (docs/api.md#tasks): the shapes are parsed, never cast, and only
 * the fields a page shows are named (unknown fields pass through untouched).
 */

const PromptSchema = z.object({
  id: z.string(),
  status: z.string(),
  /** Absent in list items (docs/api.md#resources). */
  prompt: z.optional(z.string()),
  submittedAt: z.string(),
  completedAt: z.nullable(z.string()),
  finalResult: z.nullable(z.string()),
  error: z.nullable(z.string()),
  lastSeq: z.nullable(z.number()),
});
export type Prompt = z.infer<typeof PromptSchema>;

export const VISIBILITIES = ['private', 'shared', 'public'] as const;
const VisibilitySchema = z.enum(VISIBILITIES);
export type Visibility = z.infer<typeof VisibilitySchema>;

const TaskSchema = z.object({
  id: z.string(),
  status: z.string(),
  title: z.string(),
  executor: z.string(),
  model: z.nullable(z.string()),
  workspaceId: z.string(),
  visibility: VisibilitySchema,
  shareUrl: z.nullable(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.nullable(z.string()),
  finalResult: z.nullable(z.string()),
  prompts: z.array(PromptSchema),
});
export type Task = z.infer<typeof TaskSchema>;

const TaskListSchema = z.object({
  data: z.array(TaskSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});
export type TaskList = z.infer<typeof TaskListSchema>;

const VisibilityAnswerSchema = z.object({ visibility: VisibilitySchema, shareUrl: z.nullable(z.string()) });

const ArtifactSchema = z.object({
  filename: z.string(),
  size: z.number(),
  contentType: z.string(),
  updatedAt: z.string(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;
const ArtifactListSchema = z.object({ data: z.array(ArtifactSchema), total: z.number() });

const enc = encodeURIComponent;

export async function listTasks(offset: number, limit: number, signal?: AbortSignal): Promise<TaskList> {
  const query = new URLSearchParams({ offset: String(offset), limit: String(limit) });
  return TaskListSchema.parse(await request('GET', `/v1/tasks?${query.toString()}`, { signal }));
}

export async function getTask(id: string, signal?: AbortSignal): Promise<Task> {
  return TaskSchema.parse(await request('GET', `/v1/tasks/${enc(id)}`, { signal }));
}

/** The public task behind a share link; the same 404 for a forged, revoked, private or deleted share. */
export async function getSharedTask(token: string, signal?: AbortSignal): Promise<Task> {
  return TaskSchema.parse(await request('GET', `/v1/share/${enc(token)}`, { signal }));
}

export async function sendFollowUp(id: string, prompt: string): Promise<void> {
  await request('POST', `/v1/tasks/${enc(id)}/prompts`, { body: { prompt } });
}

export async function cancelTask(id: string): Promise<Task> {
  return TaskSchema.parse(await request('POST', `/v1/tasks/${enc(id)}/cancel`));
}

export async function setVisibility(
  id: string,
  visibility: Visibility,
): Promise<z.infer<typeof VisibilityAnswerSchema>> {
  const answer = await request('PATCH', `/v1/tasks/${enc(id)}/visibility`, { body: { visibility } });
  return VisibilityAnswerSchema.parse(answer);
}

/** The first 100 artifacts (the API's largest page), newest first. */
export async function listArtifacts(workspaceId: string, signal?: AbortSignal): Promise<Artifact[]> {
  const answer = await request('GET', `/v1/workspaces/${enc(workspaceId)}/artifacts?limit=100`, { signal });
  return ArtifactListSchema.parse(answer).data;
}

/** Same-origin, so the browser sends the session cookie with the download (a plain GET). */
export const artifactUrl = (workspaceId: string, filename: string): string =>
  `/v1/workspaces/${enc(workspaceId)}/artifacts/${enc(filename)}`;

/**
 * Where a task's events are read (docs/api.md#events): task-wide from the start, or after a seq
 * already shown (a stream reopened after `done`, for a follow-up). EventSource itself resumes a
 * dropped connection with Last-Event-ID, which the server also reads task-wide.
 */
const eventsQuery = (after: number): string => (after < 0 ? 'all=true' : `after=${after}`);

export const taskEventsUrl = (id: string, after: number): string =>
  `/v1/tasks/${enc(id)}/events?${eventsQuery(after)}`;

/** The same stream through a share link, read-only. */
export const sharedEventsUrl = (token: string, after: number): string =>
  `/v1/share/${enc(token)}/events?${eventsQuery(after)}`;
