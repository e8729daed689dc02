import {
  AgentComputerConditions,
  AgentComputerType,
  HIBERNATED_BY_ANNOTATION,
  TaskReasons,
  TaskType,
  WebhookType,
  isTerminal,
} from '../../crds/index.js';
import type { AgentComputer, PromptSpec, PromptStatusEntry, Task, TaskStatus } from '../../crds/index.js';
import type { EventRecorder } from '../../platform/events.js';
import type { ExecutorCatalog } from '../../platform/executor-catalog.js';
import type { SkillCatalog } from '../../platform/skill-catalog.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import { taskEventsPrefix } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { RunnerClient, RunnerRequestError } from '../../platform/runner-client.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { writeStatus } from '../controller/status-writer.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { isTrueForGeneration } from '../../crds/conditions.js';
import {
  TIME_LIMIT_GRACE_MS,
  UndispatchableError,
  dispatchRequestOf,
  timeLimitMs,
} from './dispatch-request.js';
import {
  DEFAULT_EPHEMERAL_IDLE_GRACE_MS,
  hibernateEphemeralWorkspace,
  idleEphemeralWorkspace,
} from './ephemeral-workspace.js';
import type { TaskEventFollowers } from './event-followers.js';
import { computeTaskStatus, endedEntry, entriesOf, withRunnerState } from './prompt-progress.js';
import type { WorkspaceView } from './prompt-progress.js';
import { promptArchiverFor, withArchiveCondition } from './prompt-archive.js';
import type { ArchiveReport, PromptArchiver } from './prompt-archive.js';
import { recordPromptTransitions } from './prompt-transitions.js';
import { outboxEntriesFor, transitionEvents } from './webhook-events.js';
import type { TaskMetrics } from './metrics.js';

/** While prompts are in flight the runner is asked for their state at least this often (a backstop to the stream). */
const IN_FLIGHT_POLL_MS = 5_000;
/** Soft-deleted tasks are kept this long (hidden from the API), then removed. */
const DEFAULT_DELETED_RETENTION_MS = 7 * 24 * 3_600_000;

export interface TaskReconcilerOptions {
  store: ResourceStore;
  logger: Logger;
  events?: EventRecorder;
  installationKey: InstallationKey;
  executors: ExecutorCatalog;
  followers: TaskEventFollowers;
  metrics?: TaskMetrics;
  /** Executor variables for which no Secret exists (the embedded default passes its own environment). */
  envFallback?: Readonly<Record<string, string>>;
  deletedRetentionMs?: number;
  /** How long a task-made workspace stays up after its task's last prompt ended. Default 60 s. */
  ephemeralIdleGraceMs?: number;
  /** Resolves the skills prompts name (AGENTRY_SKILLS_FILE). */
  skills?: SkillCatalog;
  /** Skills may be fetched from loopback and private addresses (AGENTRY_WEBHOOK_PRIVATE_TARGETS). */
  allowPrivateSkillSources?: boolean;
  now?: () => Date;
  /**
   * Where uploaded files live (the runner downloads them through signed URLs), finished prompts'
   * events are archived and workspace artifacts are synced. Without one, nothing is archived.
   */
  objectStore?: ObjectStore | undefined;
}

/** One reconcile of one task: what it read, and the prompt entries it is converging. */
interface Pass {
  task: Task;
  workspace: AgentComputer | undefined;
  runner: RunnerClient | undefined;
  entries: PromptStatusEntry[];
  now: Date;
  /** The archive's outcome this pass (no object store: none). */
  archive?: ArchiveReport;
}

/** The earlier of a requeue and another wait. */
const soonest = (
  result: ReconcileResult | undefined,
  waitMs: number | undefined,
): ReconcileResult | undefined =>
  waitMs === undefined || (result?.requeueAfterMs !== undefined && result.requeueAfterMs <= waitMs)
    ? result
    : { requeueAfterMs: waitMs };

/** Prompts go to the runner only while it is ready and the task is not deleted. */
const canDispatch = (pass: Pass): boolean =>
  pass.runner !== undefined && pass.task.spec.deletedAt === undefined;

/** A pending prompt the runner has not been sent yet. */
const awaitsDispatch = (entry: PromptStatusEntry): boolean =>
  entry.status === 'pending' && entry.dispatchedAt === undefined;

/**
 * Converges a Task (docs/architecture.md#the-life-of-a-task): resumes its workspace while prompts wait, dispatches them to the
 * runner in order (idempotent by prompt id), records each prompt's progress as the runner reports it,
 * cancels what the client canceled or deleted, enforces time limits, and purges soft-deleted tasks
 * after retention. The runner is the source of truth for a dispatched prompt: a restarted operator
 * asks it instead of dispatching again, so no prompt ever runs twice.
 */
export class TaskReconciler implements Reconciler {
  private readonly now: () => Date;
  private readonly archiver: PromptArchiver | undefined;

  constructor(private readonly options: TaskReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
    this.archiver = promptArchiverFor(options);
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult | undefined> {
    const { store, followers } = this.options;
    const namespace = request.namespace ?? '';
    const task = await store.get(TaskType, namespace, request.name);
    if (task === undefined || task.metadata.deletionTimestamp !== undefined) {
      followers.stop(namespace, request.name);
      this.archiver?.forget(namespace, request.name);
      return undefined;
    }
    const now = this.now();
    if (this.purgeDue(task, now)) {
      followers.stop(namespace, request.name);
      await this.purge(task);
      return undefined;
    }
    const workspace = await store.get(AgentComputerType, namespace, task.spec.workspace);
    const pass: Pass = { task, workspace, runner: this.runnerOf(workspace), entries: entriesOf(task), now };
    await this.converge(pass);
    await this.writeStatus(pass);
    const idle = idleEphemeralWorkspace(workspace, pass.entries, {
      archiving: this.archiver !== undefined,
      graceMs: this.options.ephemeralIdleGraceMs ?? DEFAULT_EPHEMERAL_IDLE_GRACE_MS,
      now,
    });
    if (idle?.waitMs === 0)
      await hibernateEphemeralWorkspace(store, this.options.events, task, idle.workspace);
    this.follow(pass);
    return soonest(this.requeue(pass), idle === undefined || idle.waitMs === 0 ? undefined : idle.waitMs);
  }

  private async converge(pass: Pass): Promise<void> {
    await this.cancelRequested(pass);
    if (pass.workspace === undefined) {
      this.endAll(pass, 'failed', `workspace ${pass.task.spec.workspace} does not exist`);
      return;
    }
    await this.syncDispatched(pass);
    if (this.wantsWorkspace(pass)) await this.resumeWorkspace(pass.workspace);
    // Ended prompts' events and artifacts to storage; API-uploaded artifacts in place before a dispatch.
    if (this.archiver !== undefined)
      pass.archive = await this.archiver.converge(pass, this.dispatchDue(pass));
    await this.dispatchPending(pass);
  }

  /** A prompt is about to be sent to a ready runner (what dispatchPending will send this pass). */
  private dispatchDue(pass: Pass): boolean {
    return canDispatch(pass) && pass.entries.some(awaitsDispatch);
  }

  private purgeDue(task: Task, now: Date): boolean {
    const deletedAt = task.spec.deletedAt;
    if (deletedAt === undefined) return false;
    const retention = this.options.deletedRetentionMs ?? DEFAULT_DELETED_RETENTION_MS;
    return Date.parse(deletedAt) + retention <= now.getTime();
  }

  /** Removes a soft-deleted task for good, and its ephemeral workspace when no other task uses it. */
  private async purge(task: Task): Promise<void> {
    const { store } = this.options;
    const namespace = task.metadata.namespace ?? '';
    // Its archived events first: should that fail, the task is still there to retry the purge.
    await this.options.objectStore?.deletePrefix(taskEventsPrefix(namespace, task.metadata.name));
    await store
      .delete(TaskType, namespace, task.metadata.name, { uid: task.metadata.uid })
      .catch(ignoreNotFound);
    const workspace = await store.get(AgentComputerType, namespace, task.spec.workspace);
    if (workspace?.spec.ephemeral !== true) return;
    const others = await store.list(TaskType, { namespace });
    const inUse = others.items.some(
      (other) =>
        other.metadata.name !== task.metadata.name && other.spec.workspace === workspace.metadata.name,
    );
    if (inUse) return;
    await store
      .delete(AgentComputerType, namespace, workspace.metadata.name, { uid: workspace.metadata.uid })
      .catch(ignoreNotFound);
    this.options.logger.info(
      { task: task.metadata.name, namespace },
      'purged a deleted task and its workspace',
    );
  }

  /** A client to the workspace's runner when it is ready for the current spec; otherwise none. */
  private runnerOf(workspace: AgentComputer | undefined): RunnerClient | undefined {
    if (workspace?.status?.endpoint === undefined || workspace.spec.operatingMode !== 'Running')
      return undefined;
    if (workspace.metadata.deletionTimestamp !== undefined) return undefined;
    if (!isTrueForGeneration(workspace, AgentComputerConditions.Ready)) return undefined;
    return new RunnerClient({
      endpoint: workspace.status.endpoint,
      token: this.options.installationKey.runnerToken(workspace),
    });
  }

  private cancelWanted(pass: Pass, prompt: PromptSpec): boolean {
    return prompt.cancelRequestedAt !== undefined || pass.task.spec.deletedAt !== undefined;
  }

  private promptOf(pass: Pass, id: string): PromptSpec | undefined {
    return pass.task.spec.prompts.find((prompt) => prompt.id === id);
  }

  /** Canceled prompts: never dispatched ones end at once; dispatched ones are killed by the runner. */
  private async cancelRequested(pass: Pass): Promise<void> {
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
  private async syncDispatched(pass: Pass): Promise<void> {
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

  private async enforceTimeLimit(pass: Pass, index: number, runner: RunnerClient): Promise<void> {
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

  /** Whether a prompt waits to run or is running: then the workspace must run. */
  private wantsWorkspace(pass: Pass): boolean {
    if (pass.task.spec.deletedAt !== undefined) return false;
    return pass.entries.some((entry) => !isTerminal(entry.status));
  }

  /** A prompt for a hibernated workspace resumes it (docs/api.md#tasks), as `POST /agent-computers/:id/start` would. */
  private async resumeWorkspace(workspace: AgentComputer): Promise<void> {
    if (workspace.spec.operatingMode === 'Running' || workspace.metadata.deletionTimestamp !== undefined)
      return;
    const annotations = Object.fromEntries(
      Object.entries(workspace.metadata.annotations ?? {}).filter(
        ([key]) => key !== HIBERNATED_BY_ANNOTATION,
      ),
    );
    await this.options.store.replace(AgentComputerType, {
      ...workspace,
      metadata: { ...workspace.metadata, annotations },
      spec: { ...workspace.spec, operatingMode: 'Running' },
    });
    await this.options.events?.record(
      workspace,
      'Normal',
      'WorkspaceResumed',
      'a prompt is waiting; resuming',
    );
  }

  /** Sends every waiting prompt to the runner, in order; the runner runs them one at a time. */
  private async dispatchPending(pass: Pass): Promise<void> {
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

  /** The runner's state of the prompt, a reason it cannot run, or 'unreachable'. */
  private async dispatchOne(
    pass: Pass,
    runner: RunnerClient,
    prompt: PromptSpec,
  ): Promise<Awaited<ReturnType<RunnerClient['dispatchPrompt']>> | string> {
    let request;
    try {
      request = await dispatchRequestOf(
        {
          store: this.options.store,
          executors: this.options.executors,
          envFallback: this.options.envFallback ?? {},
          objectStore: this.options.objectStore,
          skills: this.options.skills,
          allowPrivateSkillSources: this.options.allowPrivateSkillSources ?? false,
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
      return await runner.dispatchPrompt(pass.task.metadata.name, prompt.id, request);
    } catch (err) {
      if (err instanceof RunnerRequestError && err.unreachable) return 'unreachable';
      if (err instanceof RunnerRequestError && err.status === 400)
        return `the runner refused the prompt: ${err.message}`;
      throw err;
    }
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

  private endAll(pass: Pass, status: 'failed' | 'canceled', error: string): void {
    pass.entries = pass.entries.map((entry) => endedEntry(entry, status, pass.now, error));
  }

  private workspaceView(pass: Pass): WorkspaceView {
    const name = pass.task.spec.workspace;
    if (pass.workspace === undefined)
      return { reason: TaskReasons.WorkspaceMissing, message: `workspace ${name} does not exist` };
    if (pass.runner !== undefined)
      return { reason: TaskReasons.WorkspaceReady, message: `workspace ${name} is ready` };
    return { reason: TaskReasons.WorkspaceStarting, message: `waiting for workspace ${name} to be ready` };
  }

  /**
   * Writes the status once, and with it (transactional outbox) a webhook delivery for every
   * transition a webhook subscribes to: a transition is never recorded without its deliveries.
   */
  private async writeStatus(pass: Pass): Promise<void> {
    const { task } = pass;
    const next: TaskStatus = withArchiveCondition(
      computeTaskStatus(task, pass.entries, this.workspaceView(pass), pass.now),
      task,
      pass.archive,
      pass.now,
    );
    // Every transition changes the status, so a pass with events always writes.
    const events = transitionEvents(task, pass.entries, next.status ?? 'running');
    if (events.length > 0) {
      const webhooks = await this.options.store.list(WebhookType, {
        namespace: task.metadata.namespace ?? '',
      });
      const owed = outboxEntriesFor(webhooks.items, events, pass.now);
      if (owed.length > 0) next.outbox = [...(task.status?.outbox ?? []), ...owed];
    }
    const written = await writeStatus(this.options.store, TaskType, task, next, { precondition: true });
    if (written === undefined) return;
    await recordPromptTransitions(
      { events: this.options.events, metrics: this.options.metrics, logger: this.options.logger },
      task,
      pass.entries,
    );
  }

  /** A live stream while prompts run, so progress is recorded within moments rather than at the next poll. */
  private follow(pass: Pass): void {
    const { followers } = this.options;
    const namespace = pass.task.metadata.namespace ?? '';
    const name = pass.task.metadata.name;
    const inFlight = pass.entries.some(
      (entry) => entry.dispatchedAt !== undefined && !isTerminal(entry.status),
    );
    const endpoint = pass.workspace?.status?.endpoint;
    if (!inFlight || pass.runner === undefined || endpoint === undefined || pass.workspace === undefined) {
      if (!inFlight) followers.stop(namespace, name);
      return;
    }
    const after = Math.max(-1, ...pass.entries.map((entry) => entry.lastSeq ?? -1));
    followers.ensure({
      namespace,
      name,
      endpoint,
      token: this.options.installationKey.runnerToken(pass.workspace),
      after,
    });
  }

  private requeue(pass: Pass): ReconcileResult | undefined {
    const deletedAt = pass.task.spec.deletedAt;
    const retry = pass.archive?.retryAfterMs;
    if (pass.entries.some((entry) => !isTerminal(entry.status)))
      return { requeueAfterMs: Math.min(IN_FLIGHT_POLL_MS, retry ?? IN_FLIGHT_POLL_MS) };
    if (retry !== undefined) return { requeueAfterMs: retry };
    if (deletedAt === undefined) return undefined;
    const retention = this.options.deletedRetentionMs ?? DEFAULT_DELETED_RETENTION_MS;
    return { requeueAfterMs: Math.max(1_000, Date.parse(deletedAt) + retention - pass.now.getTime()) };
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (isStoreError(err, 'NotFound')) return undefined;
  throw err;
}
