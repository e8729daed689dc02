import {
  CLAIM_PENDING_BOUND_MS,
  ClaimBindings,
  claimBindingOf,
  AgentComputerEventReasons,
  AgentComputerType,
  HIBERNATED_BY_ANNOTATION,
  TaskReasons,
  TaskType,
  WebhookType,
  isTerminal,
  readyForCurrentSpec,
} from '../../crds/index.js';
import type { AgentComputer, Organization, Task, TaskStatus } from '../../crds/index.js';
import type { EventRecorder } from '../../platform/events.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { writeStatus } from '../../platform/store/status-writer.js';
import type { ObjectReader } from '../controller/index.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import {
  DEFAULT_EPHEMERAL_IDLE_GRACE_MS,
  hibernateEphemeralWorkspace,
  idleEphemeralWorkspace,
} from './ephemeral-workspace.js';
import type { TaskEventFollowers } from './event-followers.js';
import { awaitsDispatch, canDispatch } from './pass.js';
import type { TaskPass } from './pass.js';
import { computeTaskStatus, endedEntry, entriesOf } from './prompt-progress.js';
import type { WorkspaceView } from './prompt-progress.js';
import { promptArchiverFor, withArchiveCondition } from './prompt-archive.js';
import type { PromptArchiver } from './prompt-archive.js';
import { PromptRunner } from './prompt-runner.js';
import type { PromptRunnerOptions } from './prompt-runner.js';
import { recordPromptTransitions } from './prompt-transitions.js';
import { DEFAULT_DELETED_RETENTION_MS, purgeAt, purgeTask } from './purge.js';
import { outboxEntriesFor, transitionEvents } from './webhook-events.js';
import type { TaskMetrics } from './metrics.js';

/** While prompts are in flight the runner is asked for their state at least this often (a backstop to the stream). */
const IN_FLIGHT_POLL_MS = 5_000;

export interface TaskReconcilerOptions extends PromptRunnerOptions {
  logger: Logger;
  events?: EventRecorder;
  installationKey: InstallationKey;
  followers: TaskEventFollowers;
  metrics?: TaskMetrics;
  /** How long a soft-deleted task is kept before it is purged. Default 7 days. */
  deletedRetentionMs?: number;
  /** How long a task-made workspace stays up after its task's last prompt ended. Default 60 s. */
  ephemeralIdleGraceMs?: number;
  now?: () => Date;
  /** The organization whose namespace this is (the operator's cache): its monthly budget applies. */
  organizationOf?: (namespace: string) => Organization | undefined;
  /**
   * The Tasks on one workspace, from the operator's Task cache by index; without it (tests) the
   * namespace's Tasks are listed from the store.
   */
  tasksOnWorkspace?: (namespace: string, workspace: string) => Task[];
  /**
   * Where uploaded files live (the runner downloads them through signed URLs), finished prompts'
   * events are archived and workspace artifacts are synced. Without one, nothing is archived.
   */
  objectStore?: ObjectStore | undefined;
}

/**
 * The task's workspace as a pass works with it, given the claim the task may have been written with
 * (crds/workspace-pool/claim-binding.ts): a claim not seen yet is waited for (its watch event wakes
 * the task), a lost one too (the API server deletes the task). Only a task left so for
 * CLAIM_PENDING_BOUND_MS from its creation (its API server stopped between the writes) goes on, as
 * claimLost, to fail.
 */
function boundWorkspace(
  task: Task,
  stored: AgentComputer | undefined,
  now: Date,
): { waitMs: number } | { workspace: AgentComputer | undefined; claimLost: boolean } {
  const binding = claimBindingOf(task, stored);
  if (binding !== ClaimBindings.Lost && binding !== ClaimBindings.Pending)
    return { workspace: stored, claimLost: false };
  const created = Date.parse(task.metadata.creationTimestamp ?? '');
  const waitMs = Number.isNaN(created)
    ? CLAIM_PENDING_BOUND_MS
    : created + CLAIM_PENDING_BOUND_MS - now.getTime();
  return waitMs > 0 ? { waitMs } : { workspace: undefined, claimLost: true };
}

/** The earlier of a requeue and another wait. */
const soonest = (
  result: ReconcileResult | undefined,
  waitMs: number | undefined,
): ReconcileResult | undefined =>
  waitMs === undefined || (result?.requeueAfterMs !== undefined && result.requeueAfterMs <= waitMs)
    ? result
    : { requeueAfterMs: waitMs };

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
  private readonly runner: PromptRunner;
  private readonly retentionMs: number;

  constructor(private readonly options: TaskReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
    this.archiver = promptArchiverFor(options);
    this.runner = new PromptRunner(options);
    this.retentionMs = options.deletedRetentionMs ?? DEFAULT_DELETED_RETENTION_MS;
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult | undefined> {
    const { followers } = this.options;
    const reads = this.reads();
    const namespace = request.namespace ?? '';
    const task = await reads.get(TaskType, namespace, request.name);
    if (task === undefined || task.metadata.deletionTimestamp !== undefined) {
      followers.stop(namespace, request.name);
      this.archiver?.forget(namespace, request.name);
      return undefined;
    }
    const now = this.now();
    if ((purgeAt(task, this.retentionMs) ?? Infinity) <= now.getTime()) {
      followers.stop(namespace, request.name);
      await purgeTask(this.options, task);
      this.options.caches?.observe(TaskType, task, true);
      return undefined;
    }
    const bound = boundWorkspace(
      task,
      await reads.get(AgentComputerType, namespace, task.spec.workspace),
      now,
    );
    if ('waitMs' in bound) return { requeueAfterMs: bound.waitMs };
    const { workspace, claimLost } = bound;
    const pass: TaskPass = {
      task,
      workspace,
      claimLost,
      runner: this.runnerOf(workspace),
      entries: entriesOf(task),
      now,
      organization: this.organizationOf(namespace),
    };
    return this.run(pass);
  }

  /** One pass over the task: converge, write its status, hibernate an idle ephemeral workspace, follow its events. */
  private async run(pass: TaskPass): Promise<ReconcileResult | undefined> {
    const { task, workspace, now } = pass;
    await this.converge(pass);
    await this.writeStatus(pass);
    const idle = idleEphemeralWorkspace(workspace, pass.entries, {
      archiving: this.archiver !== undefined,
      graceMs: this.options.ephemeralIdleGraceMs ?? DEFAULT_EPHEMERAL_IDLE_GRACE_MS,
      now,
    });
    if (idle?.waitMs === 0) {
      const { store, events, caches } = this.options;
      const others = await this.tasksOn(idle.workspace);
      const hibernated = await hibernateEphemeralWorkspace(store, events, task, idle.workspace, others);
      if (hibernated !== undefined) caches?.observe(AgentComputerType, hibernated);
    }
    this.follow(pass);
    return soonest(this.requeue(pass), idle === undefined || idle.waitMs === 0 ? undefined : idle.waitMs);
  }

  /** The Tasks on `workspace`: a cache lookup in the operator, a list of its namespace without caches. */
  private async tasksOn(workspace: AgentComputer): Promise<Task[]> {
    const namespace = workspace.metadata.namespace ?? '';
    const name = workspace.metadata.name;
    if (this.options.tasksOnWorkspace !== undefined) return this.options.tasksOnWorkspace(namespace, name);
    const { items } = await this.options.store.list(TaskType, { namespace });
    return items.filter((other) => other.spec.workspace === name);
  }

  /** The operator's caches (the view whose events woke this pass); the store where there are none (tests). */
  private reads(): ObjectReader {
    return this.options.caches ?? this.options.store;
  }

  /** The task's organization from the operator's cache, when it has one (budgets). */
  private organizationOf(namespace: string): Organization | undefined {
    return this.options.organizationOf?.(namespace);
  }

  private async converge(pass: TaskPass): Promise<void> {
    await this.runner.cancelRequested(pass);
    if (pass.claimLost === true) {
      this.endAll(pass, 'failed', `workspace ${pass.task.spec.workspace} was claimed by another request`);
      return;
    }
    if (pass.workspace === undefined) {
      this.endAll(pass, 'failed', `workspace ${pass.task.spec.workspace} does not exist`);
      return;
    }
    await this.runner.syncDispatched(pass);
    // Before the workspace is resumed: a task over budget does not wake it.
    await this.runner.stopOverBudget(pass);
    if (this.wantsWorkspace(pass)) await this.resumeWorkspace(pass.workspace);
    // Ended prompts' events and artifacts to storage; API-uploaded artifacts in place before a dispatch.
    if (this.archiver !== undefined)
      pass.archive = await this.archiver.converge(pass, this.dispatchDue(pass));
    await this.runner.dispatchPending(pass);
  }

  /** A prompt is about to be sent to a ready runner (what dispatchPending will send this pass). */
  private dispatchDue(pass: TaskPass): boolean {
    return canDispatch(pass) && pass.entries.some(awaitsDispatch);
  }

  /** A client to the workspace's runner when it is ready for the current spec; otherwise none. */
  private runnerOf(workspace: AgentComputer | undefined): RunnerClient | undefined {
    if (workspace?.status?.endpoint === undefined || workspace.spec.operatingMode !== 'Running')
      return undefined;
    if (workspace.metadata.deletionTimestamp !== undefined) return undefined;
    if (!readyForCurrentSpec(workspace)) return undefined;
    return new RunnerClient({
      endpoint: workspace.status.endpoint,
      token: this.options.installationKey.runnerToken(workspace),
    });
  }

  /** Whether a prompt waits to run or is running: then the workspace must run. */
  private wantsWorkspace(pass: TaskPass): boolean {
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
    const resumed = await this.options.store.replace(AgentComputerType, {
      ...workspace,
      metadata: { ...workspace.metadata, annotations },
      spec: { ...workspace.spec, operatingMode: 'Running' },
    });
    this.options.caches?.observe(AgentComputerType, resumed);
    await this.options.events?.record(
      workspace,
      'Normal',
      AgentComputerEventReasons.WorkspaceResumed,
      'a prompt is waiting; resuming',
    );
  }

  private endAll(pass: TaskPass, status: 'failed' | 'canceled', error: string): void {
    pass.entries = pass.entries.map((entry) => endedEntry(entry, status, pass.now, error));
  }

  private workspaceView(pass: TaskPass): WorkspaceView {
    const name = pass.task.spec.workspace;
    if (pass.claimLost === true)
      return {
        reason: TaskReasons.WorkspaceClaimLost,
        message: `workspace ${name} was claimed by another request`,
      };
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
  private async writeStatus(pass: TaskPass): Promise<void> {
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
    const written = await writeStatus(this.options.store, TaskType, task, next, {
      precondition: true,
      caches: this.options.caches,
    });
    if (written === undefined) return;
    await recordPromptTransitions(
      { events: this.options.events, metrics: this.options.metrics, logger: this.options.logger },
      task,
      pass.entries,
    );
  }

  /** A live stream while prompts run, so progress is recorded within moments rather than at the next poll. */
  private follow(pass: TaskPass): void {
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

  private requeue(pass: TaskPass): ReconcileResult | undefined {
    const retry = pass.archive?.retryAfterMs;
    if (pass.entries.some((entry) => !isTerminal(entry.status)))
      return { requeueAfterMs: Math.min(IN_FLIGHT_POLL_MS, retry ?? IN_FLIGHT_POLL_MS) };
    if (retry !== undefined) return { requeueAfterMs: retry };
    const purgeTime = purgeAt(pass.task, this.retentionMs);
    if (purgeTime === undefined) return undefined;
    return { requeueAfterMs: Math.max(1_000, purgeTime - pass.now.getTime()) };
  }
}
