import { isTerminal } from '../../crds/index.js';
import type { PromptSpec, PromptStatusEntry } from '../../crds/index.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { RunnerRequestError } from '../../platform/runner-client.js';
import type { RunnerClient } from '../../platform/runner-client.js';
import type { SkillCatalog } from '../../platform/skill-catalog.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/index.js';
import {
  TIME_LIMIT_GRACE_MS,
  UndispatchableError,
  dispatchRequestOf,
  timeLimitMs,
} from './dispatch-request.js';
import { awaitsDispatch, canDispatch } from './pass.js';
import type { WorkspaceAccess } from './workspace-access.js';
import type { TaskPass } from './pass.js';
import { promptBudgetBreach, taskBudgetBreach } from './budget.js';
import { budgetFailedEntry, endedEntry, withRunnerState } from './prompt-progress.js';

export interface PromptRunnerOptions {
  store: ResourceStore;
  /** The operator's caches, where a dispatch reads the organization's context lake; the store without them. */
  caches?: Caches | undefined;
  executors: ExecutorCatalog;
  /** Executor variables for which no Secret exists (the embedded default passes its own environment). */
  envFallback?: Readonly<Record<string, string>> | undefined;
  /** Where uploaded files live; the runner downloads them through signed URLs. */
  objectStore?: ObjectStore | undefined;
  /** Resolves the skills prompts name (AGENTRY_SKILLS_FILE). */
  skills?: SkillCatalog | undefined;
  /** Skills may be fetched from loopback and private addresses (AGENTRY_WEBHOOK_PRIVATE_TARGETS). */
  allowPrivateSkillSources?: boolean | undefined;
  /** The model gateway and egress proxy prompts use (docs/adr/0009); undefined: neither. */
  access?: WorkspaceAccess | undefined;
  /** Where each dispatch's timing goes, at debug level. */
  logger?: Logger | undefined;
}

/**
 * A task's conversation with its workspace's runner, one pass at a time: cancels what the client
 * canceled or deleted, records what the runner reports of dispatched prompts, ends prompts past
 * their time limit, and dispatches waiting prompts in order (idempotent by prompt id). Each step
 * updates `pass.entries`; a runner that does not answer leaves them as they are until the next pass.
 */
export class PromptRunner {
  constructor(private readonly options: PromptRunnerOptions) {}

  /** Canceled prompts: never dispatched ones end at once; dispatched ones are killed by the runner. */
  async cancelRequested(pass: TaskPass): Promise<void> {
    for (const [index, entry] of pass.entries.entries()) {
      const prompt = this.promptOf(pass, entry.id);
      if (prompt === undefined || isTerminal(entry.status) || !this.cancelWanted(pass, prompt)) continue;
      if (entry.dispatchedAt === undefined || pass.runner === undefined) {
        // Not dispatched, or its workspace is not running (so neither is the prompt).
        pass.entries[index] = endedEntry(entry, 'canceled', pass.now);
        continue;
      }
      const state = await this.askRunner(() => pass.runner?.cancelPrompt(pass.task.metadata.name, entry.id));
      if (state === 'unreachable') continue;
      pass.entries[index] =
        state === undefined ? endedEntry(entry, 'canceled', pass.now) : withRunnerState(entry, state);
    }
  }

  /** Dispatched prompts still in flight: record what the runner says; end the ones past their time limit. */
  async syncDispatched(pass: TaskPass): Promise<void> {
    const runner = pass.runner;
    if (runner === undefined) return;
    for (const [index, entry] of pass.entries.entries()) {
      if (entry.dispatchedAt === undefined || isTerminal(entry.status)) continue;
      const state = await this.askRunner(() => runner.getPrompt(pass.task.metadata.name, entry.id));
      if (state === 'unreachable') return;
      pass.entries[index] =
        state === undefined
          ? endedEntry(
              entry,
              'failed',
              pass.now,
              'the workspace lost this prompt (its disk was replaced); it was not run again',
            )
          : withRunnerState(entry, state);
      await this.enforceTimeLimit(pass, index, runner);
    }
  }

  /**
   * Prompts past a budget (docs/adr/0009, level-based): one the model gateway flagged, or any of a
   * task or organization whose usage reached its budget, is stopped in the runner as a cancel is and
   * fails with reason budget_exceeded; one never dispatched fails without being dispatched.
   */
  async stopOverBudget(pass: TaskPass): Promise<void> {
    const taskBreach = taskBudgetBreach(pass.task, pass.organization, pass.now);
    for (const [index, entry] of pass.entries.entries()) {
      if (isTerminal(entry.status)) continue;
      const breach = promptBudgetBreach(entry, taskBreach, pass.task, pass.organization);
      if (breach === undefined) continue;
      const state = await this.stopInRunner(pass, entry);
      // Recorded once the runner has stopped it (a runner down now is asked again next pass).
      if (state === 'unreachable') continue;
      // A prompt that ended on its own before the stop keeps its own outcome.
      pass.entries[index] =
        state !== undefined && state.status !== 'canceled' && isTerminal(state.status)
          ? withRunnerState(entry, state)
          : budgetFailedEntry(entry, pass.now, breach.message);
    }
  }

  /** Stops a dispatched prompt as a cancel does; answers the runner's state (none: not dispatched). */
  private async stopInRunner(pass: TaskPass, entry: PromptStatusEntry) {
    if (entry.dispatchedAt === undefined || pass.runner === undefined) return undefined;
    const runner = pass.runner;
    return this.askRunner(() => runner.cancelPrompt(pass.task.metadata.name, entry.id));
  }

  /** Sends every waiting prompt to the runner, in order; the runner runs them one at a time. */
  async dispatchPending(pass: TaskPass): Promise<void> {
    const runner = pass.runner;
    if (runner === undefined || !canDispatch(pass)) return;
    for (const [index, entry] of pass.entries.entries()) {
      const prompt = this.promptOf(pass, entry.id);
      if (prompt === undefined || !awaitsDispatch(entry)) continue;
      const outcome = await this.dispatchOne(pass, runner, prompt);
      if (outcome === 'unreachable') return;
      pass.entries[index] =
        typeof outcome === 'string'
          ? endedEntry(entry, 'failed', pass.now, outcome)
          : withRunnerState({ ...entry, dispatchedAt: pass.now.toISOString() }, outcome);
    }
  }

  private async enforceTimeLimit(pass: TaskPass, index: number, runner: RunnerClient): Promise<void> {
    const entry = pass.entries[index];
    const prompt = entry === undefined ? undefined : this.promptOf(pass, entry.id);
    if (entry?.status !== 'running' || entry.startedAt === undefined || prompt === undefined) return;
    const limit = timeLimitMs(this.options.executors, pass.task, prompt);
    if (Date.parse(entry.startedAt) + limit + TIME_LIMIT_GRACE_MS > pass.now.getTime()) return;
    await this.askRunner(() => runner.cancelPrompt(pass.task.metadata.name, entry.id));
    pass.entries[index] = endedEntry(
      entry,
      'failed',
      pass.now,
      `the prompt exceeded its time limit of ${Math.round(limit / 1000)}s`,
    );
  }

  /** The runner's state of the prompt, a reason it cannot run, or 'unreachable'. */
  private async dispatchOne(
    pass: TaskPass,
    runner: RunnerClient,
    prompt: PromptSpec,
  ): Promise<Awaited<ReturnType<RunnerClient['dispatchPrompt']>> | string> {
    let request;
    try {
      request = await dispatchRequestOf(
        {
          store: this.options.store,
          caches: this.options.caches,
          executors: this.options.executors,
          envFallback: this.options.envFallback ?? {},
          objectStore: this.options.objectStore,
          skills: this.options.skills,
          allowPrivateSkillSources: this.options.allowPrivateSkillSources ?? false,
          access: this.options.access,
        },
        pass.task,
        prompt,
        pass.workspace,
      );
    } catch (err) {
      if (err instanceof UndispatchableError) return err.message;
      throw err;
    }
    try {
      const sent = performance.now();
      const state = await runner.dispatchPrompt(pass.task.metadata.name, prompt.id, request);
      this.logDispatch(pass, prompt, sent);
      return state;
    } catch (err) {
      if (err instanceof RunnerRequestError && err.unreachable) return 'unreachable';
      if (err instanceof RunnerRequestError && err.status === 400)
        return `the runner refused the prompt: ${err.message}`;
      throw err;
    }
  }

  /**
   * How long the runner took to accept the prompt and how long after the task's creation it was
   * sent: a first prompt's or a claim's extra time shows here or before it (docs/benchmarks.md).
   */
  private logDispatch(pass: TaskPass, prompt: PromptSpec, sent: number): void {
    const created = Date.parse(pass.task.metadata.creationTimestamp ?? '');
    this.options.logger?.debug(
      {
        task: pass.task.metadata.name,
        prompt: prompt.id,
        workspace: pass.task.spec.workspace,
        dispatchMs: Math.round(performance.now() - sent),
        ...(Number.isNaN(created) ? {} : { sinceCreatedMs: pass.now.getTime() - created }),
      },
      'dispatched a prompt',
    );
  }

  /** Runs a runner call; 'unreachable' when the runner is down (the workspace may be restarting). */
  private async askRunner<T>(call: () => Promise<T> | undefined): Promise<T | 'unreachable' | undefined> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof RunnerRequestError && err.unreachable) return 'unreachable';
      throw err;
    }
  }

  private cancelWanted(pass: TaskPass, prompt: PromptSpec): boolean {
    return prompt.cancelRequestedAt !== undefined || pass.task.spec.deletedAt !== undefined;
  }

  private promptOf(pass: TaskPass, id: string): PromptSpec | undefined {
    return pass.task.spec.prompts.find((prompt) => prompt.id === id);
  }
}
