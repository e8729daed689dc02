import { TaskConditions, TaskEventReasons, TaskReasons, isTerminal } from '../../crds/index.js';
import type { PromptStatusEntry, Task, TaskStatus } from '../../crds/index.js';
import type { EventRecorder } from '../../platform/events.js';
import type { Logger } from '../../platform/log.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { RunnerClient } from '../../platform/runner-client.js';
import { syncArtifacts } from './artifacts/sync.js';
import { archivePromptEvents } from './artifacts/event-archive.js';
import { StoreSideChanges } from './artifacts/store-changes.js';
import { WorkspaceLocks } from './artifacts/workspace-locks.js';
import { setCondition } from '../../crds/conditions.js';
import type { TaskMetrics } from './metrics.js';
import { describeError } from '../../platform/describe-error.js';

/** Retries of a failed archive or sync: 2 s doubling to 5 min. */
const RETRY_BASE_MS = 2_000;
const RETRY_MAX_MS = 300_000;
/** A prompt the Task records as ended but the runner is still finishing: look again soon. */
const NOT_FINISHED_RETRY_MS = 2_000;

export interface PromptArchiverOptions {
  objectStore: ObjectStore;
  /** Where a workspace's mark of API-made artifact changes is read (store-changes.ts); without it, every dispatch syncs. */
  store?: ResourceStore | undefined;
  logger: Logger;
  events?: EventRecorder | undefined;
  metrics?: TaskMetrics | undefined;
}

/** What one pass needs: the task, its runner (undefined while the workspace is not ready), its entries (updated in place). */
export interface ArchivePass {
  task: Task;
  runner: RunnerClient | undefined;
  entries: PromptStatusEntry[];
  now: Date;
}

/** The `Archived` condition to write, and when to look again. */
export interface ArchiveReport {
  condition: {
    status: 'True' | 'False';
    reason:
      typeof TaskReasons.Archived | typeof TaskReasons.ArchivePending | typeof TaskReasons.ArchiveFailed;
    message: string;
  };
  retryAfterMs?: number;
}

const owesEvents = (entry: PromptStatusEntry): boolean =>
  isTerminal(entry.status) && entry.archivedAt === undefined;
const owesSync = (entry: PromptStatusEntry): boolean =>
  isTerminal(entry.status) && entry.artifactsSyncedAt === undefined;
const describe = (err: unknown): string => describeError(err, 500);

/** A prompt that ended before it reached the runner has no events and changed no file: nothing is owed. */
function settleUndispatched(pass: ArchivePass): void {
  const at = pass.now.toISOString();
  pass.entries.forEach((entry, index) => {
    if (!isTerminal(entry.status) || entry.dispatchedAt !== undefined) return;
    if (!owesEvents(entry) && !owesSync(entry)) return;
    pass.entries[index] = {
      ...entry,
      archivedAt: entry.archivedAt ?? at,
      artifactsSyncedAt: entry.artifactsSyncedAt ?? at,
    };
  });
}

/**
 * Keeps finished prompts' history and the artifacts they left readable without the workspace
 * (issue 7): when a prompt ends, its events are archived to object storage, then the workspace's
 * /code/artifacts is synced both ways; before a prompt is dispatched, the sync runs too when the
 * API server changed the store's side since the last one (artifacts/store-changes.ts), so
 * artifacts uploaded through the API are in place. Each prompt's Task status entry records both
 * (`archivedAt`, `artifactsSyncedAt`); the `Archived` condition says whether anything is owed.
 */
export class PromptArchiver {
  private readonly locks = new WorkspaceLocks();
  private readonly failures = new Map<string, number>();
  private readonly storeChanges: StoreSideChanges | undefined;

  constructor(private readonly options: PromptArchiverOptions) {
    this.storeChanges = options.store === undefined ? undefined : new StoreSideChanges(options.store);
  }

  /**
   * Archives what is owed and syncs when asked (`push`: a prompt is about to be dispatched).
   * Never throws for a storage or runner failure: the condition says so and the caller requeues.
   */
  async converge(pass: ArchivePass, push: boolean): Promise<ArchiveReport> {
    settleUndispatched(pass);
    const owed = pass.entries.some((entry) => owesEvents(entry) || owesSync(entry));
    if (!owed && !push) return this.settled(pass);
    if (pass.runner === undefined) return this.settled(pass);
    const key = `${pass.task.metadata.namespace ?? ''}/${pass.task.metadata.name}`;
    try {
      const finishing = await this.archiveEvents(pass, pass.runner);
      const syncOwed = pass.entries.some(owesSync);
      // Before a prompt alone, only when the API server changed the store's side since the last sync.
      if (syncOwed || push) await this.sync(pass, pass.runner, !syncOwed);
      this.failures.delete(key);
      const report = this.settled(pass);
      return finishing ? { ...report, retryAfterMs: NOT_FINISHED_RETRY_MS } : report;
    } catch (err) {
      return this.failed(pass, key, err);
    }
  }

  /** Archives every terminal prompt's events not yet archived; true when one is still finishing on the runner. */
  private async archiveEvents(pass: ArchivePass, runner: RunnerClient): Promise<boolean> {
    const { objectStore, metrics } = this.options;
    let finishing = false;
    for (const [index, entry] of pass.entries.entries()) {
      if (!owesEvents(entry)) continue;
      const target = {
        namespace: pass.task.metadata.namespace ?? '',
        task: pass.task.metadata.name,
        promptId: entry.id,
      };
      let outcome;
      try {
        outcome = await archivePromptEvents(runner, objectStore, target);
      } catch (err) {
        metrics?.archiveErrors.labels('events').inc();
        throw new Error(`archiving the events of prompt ${entry.id}: ${describe(err)}`, { cause: err });
      }
      if (outcome === 'notFinished') {
        finishing = true;
        continue;
      }
      metrics?.promptsArchived.inc();
      pass.entries[index] = { ...entry, archivedAt: pass.now.toISOString() };
    }
    return finishing;
  }

  /** One sync of the workspace's artifacts (one at a time per workspace); marks the ended prompts synced. */
  private async sync(pass: ArchivePass, runner: RunnerClient, onlyIfStoreChanged: boolean): Promise<void> {
    const namespace = pass.task.metadata.namespace ?? '';
    const workspace = pass.task.spec.workspace;
    // Only prompts that had ended when the sync began count as synced: their files are in it.
    const ended = new Set(pass.entries.filter((entry) => isTerminal(entry.status)).map((entry) => entry.id));
    const result = await this.locks.run(`${namespace}/${workspace}`, async () => {
      // Read before the sync: a change marked while it runs is pushed by the next one.
      const mark = await this.storeChanges?.read(namespace, workspace);
      if (onlyIfStoreChanged && mark !== undefined && !this.storeChanges?.owed(namespace, workspace, mark))
        return undefined;
      const synced = await syncArtifacts({
        runner,
        store: this.options.objectStore,
        namespace,
        workspace,
        logger: this.options.logger.child({ workspace, namespace }),
        metrics: this.options.metrics,
      });
      if (mark !== undefined && synced.failures.length === 0)
        this.storeChanges?.record(namespace, workspace, mark);
      return synced;
    });
    if (result === undefined) return;
    if (result.failures.length > 0) {
      this.options.metrics?.archiveErrors.labels('artifacts').inc();
      const first = result.failures[0];
      throw new Error(
        `syncing artifacts: ${result.failures.length} file(s) failed, e.g. ${first?.path ?? ''}: ${first?.error ?? ''}`,
      );
    }
    const at = pass.now.toISOString();
    pass.entries.forEach((entry, index) => {
      if (ended.has(entry.id) && entry.artifactsSyncedAt === undefined)
        pass.entries[index] = { ...entry, artifactsSyncedAt: at };
    });
  }

  private settled(pass: ArchivePass): ArchiveReport {
    const owing = pass.entries.filter((entry) => owesEvents(entry) || owesSync(entry)).length;
    if (owing === 0)
      return {
        condition: {
          status: 'True',
          reason: TaskReasons.Archived,
          message: 'every finished prompt is archived',
        },
      };
    return {
      condition: {
        status: 'False',
        reason: TaskReasons.ArchivePending,
        message: `${owing} finished prompt(s) wait for the workspace to archive their events and artifacts`,
      },
    };
  }

  private async failed(pass: ArchivePass, key: string, err: unknown): Promise<ArchiveReport> {
    const attempts = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempts);
    const message = describe(err);
    this.options.logger.warn(
      { err, task: pass.task.metadata.name, attempts },
      'archiving a task failed; retrying',
    );
    await this.options.events?.record(pass.task, 'Warning', TaskEventReasons.ArchiveFailed, message);
    return {
      condition: { status: 'False', reason: TaskReasons.ArchiveFailed, message },
      retryAfterMs: Math.min(RETRY_BASE_MS * 2 ** Math.min(attempts - 1, 10), RETRY_MAX_MS),
    };
  }

  /** Forgets a task's retry count (it is gone). */
  forget(namespace: string, name: string): void {
    this.failures.delete(`${namespace}/${name}`);
  }
}

/** The archiver of an operator with object storage; none without (then nothing is archived and nothing waits for it). */
export function promptArchiverFor(options: {
  objectStore?: ObjectStore | undefined;
  store?: ResourceStore | undefined;
  logger: Logger;
  events?: EventRecorder | undefined;
  metrics?: TaskMetrics | undefined;
}): PromptArchiver | undefined {
  const { objectStore } = options;
  if (objectStore === undefined) return undefined;
  return new PromptArchiver({ ...options, objectStore });
}

/** The status with this pass's `Archived` condition (unchanged when nothing was archived: no object store). */
export function withArchiveCondition(
  status: TaskStatus,
  task: Task,
  report: ArchiveReport | undefined,
  now: Date,
): TaskStatus {
  if (report === undefined) return status;
  const condition = { type: TaskConditions.Archived, ...report.condition };
  return { ...status, conditions: setCondition(status.conditions, condition, task.metadata.generation, now) };
}
