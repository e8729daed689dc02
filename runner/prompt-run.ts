import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../platform/log.js';
import type { DispatchPrompt, EventType } from '../platform/runner-protocol.js';
import type { ExecutorOutcome, ExecutorRun, RunExecutor } from './executors/types.js';
import { fetchMeteredUsage } from './metered-usage.js';
import { prepareAgent } from './agent-setup.js';
import { prepareWorkspace, WorkspacePrepError } from './workspace-prep.js';

export interface PromptRunContext {
  workdir: string;
  /** The working directory as events name it (the `cwd` of `init`). */
  shownWorkdir: string;
  stateDir: string;
  runExecutor: RunExecutor;
  logger: Logger;
  /** Preparing the workspace (clone, downloads) fails after this long. */
  prepTimeoutMs?: number;
  /** How long the model gateway has to answer the prompt's usage (default 5 s). */
  meteredUsageTimeoutMs?: number | undefined;
}

export interface PromptToRun {
  taskId: string;
  promptId: string;
  request: DispatchPrompt;
}

/** Where the result's `metered` figures come from: the model gateway, when the prompt uses it. */
function meteredUsageOf(context: PromptRunContext, prompt: PromptToRun): Pick<ExecutorRun, 'meteredUsage'> {
  const gateway = prompt.request.modelGateway;
  if (gateway === undefined) return {};
  const logger = context.logger.child({ taskId: prompt.taskId, promptId: prompt.promptId });
  return { meteredUsage: () => fetchMeteredUsage(gateway, logger, context.meteredUsageTimeoutMs) };
}

/** Read through a call: the compiler would otherwise keep an earlier check's narrowing across awaits. */
const aborted = (signal: AbortSignal): boolean => signal.aborted;

/** Appends one event of the prompt to the task's log (durably). */
export type EmitEvent = (eventType: EventType, payload: Record<string, unknown>) => Promise<unknown>;

/** Prepares the workspace; a failure becomes the prompt's `error` event and a failed outcome. */
async function prepare(
  context: PromptRunContext,
  prompt: PromptToRun,
  signal: AbortSignal,
  emit: EmitEvent,
): Promise<ExecutorOutcome | undefined> {
  try {
    await prepareWorkspace({
      workdir: context.workdir,
      request: prompt.request,
      signal,
      timeoutMs: context.prepTimeoutMs,
    });
    // After the clone: the repository's own CLAUDE.md (or AGENTS.md …) gets the section appended.
    for (const warning of await prepareAgent(context, prompt.request, signal))
      await emit('warning', { ...warning });
    return undefined;
  } catch (err) {
    if (signal.aborted) return { status: 'canceled' };
    const error =
      err instanceof WorkspacePrepError ? err.message : 'the workspace could not be prepared for this prompt';
    if (!(err instanceof WorkspacePrepError))
      context.logger.error({ err, taskId: prompt.taskId, promptId: prompt.promptId }, 'preparing failed');
    await emit('error', { message: error });
    return { status: 'failed', error };
  }
}

/** A prompt's private directory: its prompt file and the note naming its executor's process group. */
export const scratchDirOf = (stateDir: string, taskId: string, promptId: string): string =>
  join(stateDir, 'tasks', taskId, 'scratch', promptId);

/**
 * Runs one prompt after the `running` status: prepares the workspace, then the executor, in the
 * working directory with a private scratch directory (removed afterwards: it holds the prompt).
 * Resolves with the outcome; the caller appends the terminal status.
 */
export async function executePrompt(
  context: PromptRunContext,
  prompt: PromptToRun,
  signal: AbortSignal,
  emit: EmitEvent,
): Promise<ExecutorOutcome> {
  const failedPrep = await prepare(context, prompt, signal, emit);
  if (failedPrep !== undefined) return failedPrep;
  if (signal.aborted) return { status: 'canceled' };
  const scratchDir = scratchDirOf(context.stateDir, prompt.taskId, prompt.promptId);
  try {
    await mkdir(scratchDir, { recursive: true, mode: 0o700 });
    return await context.runExecutor({
      invocation: prompt.request.executor,
      prompt: prompt.request.text,
      cwd: context.workdir,
      shownCwd: context.shownWorkdir,
      scratchDir,
      signal,
      onEvent: async (event) => {
        await emit(event.eventType, event.payload);
      },
      ...meteredUsageOf(context, prompt),
    });
  } catch (err) {
    // The executor rejects only when recording its events failed (a broken disk) or on a bug.
    context.logger.error({ err, taskId: prompt.taskId, promptId: prompt.promptId }, 'the executor failed');
    if (aborted(signal)) return { status: 'canceled' };
    const error = 'the runner could not run the executor';
    await emit('error', { message: error }).catch(() => undefined);
    return { status: 'failed', error };
  } finally {
    await rm(scratchDir, { recursive: true, force: true });
  }
}
