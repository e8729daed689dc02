import * as z from 'zod/mini';
import { request } from '../../http/client.js';

/** The fields of an agent computer this page shows (docs/api.md#resources). */
const WorkspaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['provisioning', 'ready', 'hibernated', 'error']),
  requestedMode: z.enum(['running', 'hibernated']),
  /** Names the VM, Pod or process (`process-…`) once it exists: the record's only runtime hint. */
  sandboxId: z.nullable(z.string()),
  provisionError: z.nullable(z.string()),
  createdAt: z.string(),
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

const WorkspacePageSchema = z.object({
  data: z.array(WorkspaceSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});
export type WorkspacePage = z.infer<typeof WorkspacePageSchema>;

/** A task as the list shows it, prompts left out. */
const TaskSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  status: z.string(),
  createdAt: z.string(),
});
export type TaskSummary = z.infer<typeof TaskSummarySchema>;

const TaskPageSchema = z.object({ data: z.array(TaskSummarySchema), total: z.number() });
export type WorkspaceTasks = z.infer<typeof TaskPageSchema>;

/** Rows per page of the list (the API allows 1..100). */
export const WORKSPACES_PER_PAGE = 20;
/** Tasks shown under a workspace: the newest; the rest are on the tasks page. */
export const TASKS_PER_WORKSPACE = 20;

const workspacePath = (id: string): string => `/v1/agent-computers/${encodeURIComponent(id)}`;

export async function listWorkspaces(offset: number, signal?: AbortSignal): Promise<WorkspacePage> {
  const query = new URLSearchParams({ limit: String(WORKSPACES_PER_PAGE), offset: String(offset) });
  return WorkspacePageSchema.parse(
    await request('GET', `/v1/agent-computers?${query.toString()}`, signal ? { signal } : {}),
  );
}

/** POST …/stop or …/start (202): the record now; its status follows requestedMode later. */
export async function setWorkspaceMode(id: string, action: 'stop' | 'start'): Promise<Workspace> {
  return WorkspaceSchema.parse(await request('POST', `${workspacePath(id)}/${action}`));
}

export async function deleteWorkspace(id: string): Promise<void> {
  await request('DELETE', workspacePath(id));
}

/** GET /v1/tasks?workspaceId=…: the API filters by workspace, newest first. */
export async function listWorkspaceTasks(id: string): Promise<WorkspaceTasks> {
  const query = new URLSearchParams({ workspaceId: id, limit: String(TASKS_PER_WORKSPACE) });
  return TaskPageSchema.parse(await request('GET', `/v1/tasks?${query.toString()}`));
}
