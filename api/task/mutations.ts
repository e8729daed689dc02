import { Buffer } from 'node:buffer';
import { promptEntryOf, promptStatusOf } from '../../crds/index.js';
import type { PromptSpec, Task, Visibility } from '../../crds/index.js';
import { ApiError } from '../errors.js';

/**
 * Intent changes of a Task spec, as pure functions of the fresh copy a read-modify-write read:
 * `updateWithRetry` runs them again after a conflict, so none may depend on a stale cache.
 * Undefined means "nothing to change" (no write, no new resourceVersion).
 */

/** docs/api.md#limits: prompts and history of one task stay under ~900 KB (etcd's objects are ~1.5 MB). */
export const MAX_TASK_PROMPT_BYTES = 900_000;
/** TaskSpecSchema's bound on prompts. */
export const MAX_TASK_PROMPTS = 1000;

const promptBytes = (task: Task): number =>
  task.spec.prompts.reduce((sum, prompt) => sum + Buffer.byteLength(prompt.text, 'utf8'), 0);

/** Appends a follow-up prompt, or refuses with 400 limit_exceeded when the task is full. */
export function withPrompt(task: Task, prompt: PromptSpec): Task {
  if (task.spec.prompts.length >= MAX_TASK_PROMPTS) {
    throw new ApiError(
      'limit_exceeded',
      `A task holds at most ${MAX_TASK_PROMPTS} prompts; start a new task on the same workspace (workspaceId)`,
    );
  }
  if (promptBytes(task) + Buffer.byteLength(prompt.text, 'utf8') > MAX_TASK_PROMPT_BYTES) {
    throw new ApiError(
      'limit_exceeded',
      `The prompts of a task may total at most ${MAX_TASK_PROMPT_BYTES} bytes; start a new task on the same workspace (workspaceId)`,
    );
  }
  return { ...task, spec: { ...task.spec, prompts: [...task.spec.prompts, prompt] } };
}

/** Asks for every pending or running prompt to be canceled; a finished task has nothing to change. */
export function withCancelRequested(task: Task, at: Date): Task | undefined {
  const unfinished = (prompt: PromptSpec): boolean => {
    const status = promptStatusOf(prompt, promptEntryOf(task, prompt.id));
    return (status === 'pending' || status === 'running') && prompt.cancelRequestedAt === undefined;
  };
  if (!task.spec.prompts.some(unfinished)) return undefined;
  const prompts = task.spec.prompts.map((prompt) =>
    unfinished(prompt) ? { ...prompt, cancelRequestedAt: at.toISOString() } : prompt,
  );
  return { ...task, spec: { ...task.spec, prompts } };
}

/**
 * Public needs a share id (a new one when there is none); any other visibility drops it, so a
 * link once handed out stops working and a later `public` makes a different one.
 */
export function withVisibility(
  task: Task,
  visibility: Visibility,
  newShareId: () => string,
): Task | undefined {
  const shareId = visibility === 'public' ? (task.spec.shareId ?? newShareId()) : undefined;
  if (task.spec.visibility === visibility && task.spec.shareId === shareId) return undefined;
  const { shareId: _old, ...spec } = task.spec;
  return { ...task, spec: { ...spec, visibility, ...(shareId === undefined ? {} : { shareId }) } };
}

/** Soft delete: the task reads 404 from now on; its unfinished prompts are canceled. */
export function softDeleted(task: Task, at: Date): Task {
  const canceled = withCancelRequested(task, at) ?? task;
  return { ...canceled, spec: { ...canceled.spec, deletedAt: at.toISOString() } };
}
