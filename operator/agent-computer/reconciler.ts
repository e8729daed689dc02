import {
  AgentComputerConditions,
  AgentComputerEventReasons,
  AgentComputerType,
  HIBERNATED_BY_ANNOTATION,
  LAST_PREVIEW_AT_ANNOTATION,
  POOL_CLAIMED_AT_ANNOTATION,
  SecretType,
  claimQuietEndsAt,
} from '../../crds/index.js';
import { isTrue } from '../../crds/conditions.js';
import type {
  AgentComputer,
  AgentComputerConditionType,
  AgentComputerStatus,
  Runtime,
  Task,
} from '../../crds/index.js';
import { describeError } from '../../platform/describe-error.js';
import { parseDuration } from '../../platform/duration.js';
import type { EventRecorder } from '../../platform/events.js';
import { artifactPrefix } from '../../platform/objectstore/keys.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import { writeStatus } from '../../platform/store/status-writer.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { deleteControlled } from '../runtimes/ensure-object.js';
import type { WorkloadObservation, WorkloadRuntime } from '../runtimes/types.js';
import { workloadLabels } from '../runtimes/types.js';
import { computeAgentComputerStatus, runtimeNotEnabledStatus } from './status.js';
import { workspaceActivity } from './workspace-activity.js';
import type { WorkspaceActivity } from './workspace-activity.js';
import { ensureWorkloadToken } from '../runtimes/workload-token.js';
import type { RunnerConnections } from './runner-connections.js';

/** Holds deletion until the runtime removed what owner references cannot (a local process). */
export const WORKLOAD_FINALIZER = 'agentry.dev/workload';

/**
 * A safety net only: a workload that is not ready yet wakes its AgentComputer through its own
 * objects' watch events (Pod, VM, Service, PVC) or the process runtime's notice; this catches a
 * missed one. Polling every 2 s cost a reconcile per workspace per tick while hundreds booted.
 */
export const NOT_READY_SAFETY_REQUEUE_MS = 30_000;

/** The Tasks naming one workspace, from the operator's Task cache (see tasksByWorkspace). */
export type WorkspaceTasks = (namespace: string, workspace: string) => readonly Task[];

export interface AgentComputerReconcilerOptions {
  store: ResourceStore;
  /**
   * The manager's informer caches (AgentComputers and the kinds the runtimes make): read there
   * instead of the store, every write recorded in them. Without them everything is read from the store.
   */
  caches?: Caches | undefined;
  /** Looked up per reconcile instead of listing the namespace's Tasks (quadratic over many workspaces). */
  tasksOf: WorkspaceTasks;
  events?: EventRecorder;
  runtimes: ReadonlyMap<Runtime, WorkloadRuntime>;
  defaultRuntime: Runtime;
  logger: Logger;
  installationKey: InstallationKey;
  /** Where the workspace's artifacts are kept; its deletion removes them (nothing can read them after). */
  objectStore?: ObjectStore | undefined;
  /** Opens and keeps open the operator's connections to ready runners; without it, prompts open them. */
  connections?: RunnerConnections | undefined;
  now?: () => Date;
}

export const tokenSecretName = (ac: AgentComputer): string => `${ac.metadata.name}-runner-token`;

/**
 * Converges an AgentComputer: token Secret, the workload in its runtime, idle hibernation, and
 * status conditions, written once per pass and only when they change.
 */
export class AgentComputerReconciler implements Reconciler {
  private readonly now: () => Date;

  constructor(private readonly options: AgentComputerReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const { store, caches } = this.options;
    const ac =
      caches === undefined
        ? await store.get(AgentComputerType, request.namespace, request.name)
        : caches.get(AgentComputerType, request.namespace, request.name);
    if (ac === undefined) {
      this.gone(request);
      return undefined;
    }
    const runtime = this.options.runtimes.get(this.runtimeNameOf(ac));
    if (runtime === undefined) {
      await this.refuseRuntime(ac);
      return undefined; // a spec change (or an operator restarted with the runtime) wakes us again
    }
    if (ac.metadata.deletionTimestamp !== undefined) {
      await this.finalize(ac, runtime);
      return undefined;
    }
    // A claimed member needs nothing at once: its status for the claim's generation waits a second.
    const now = this.now().getTime();
    const quietEnds = claimQuietEndsAt(ac, now);
    if (quietEnds !== undefined) return { requeueAfterMs: quietEnds - now };
    const tasks = this.options.tasksOf(ac.metadata.namespace ?? '', ac.metadata.name);
    const activity = workspaceActivity(tasks, ac.metadata.name);
    // Before the finalizer: hibernating writes the spec only, and the pass it wakes adds the finalizer.
    if (await this.hibernateIfIdle(ac, activity)) return undefined; // the spec change wakes us again
    const finalizerStored = this.ensureFinalizer(ac);
    // Awaited below (and by the runtime); a rejection meanwhile must not count as unhandled.
    finalizerStored.catch(() => undefined);
    const applied = runtime.collectedByOwnerReferences ? ac : await finalizerStored;
    let observation: WorkloadObservation | undefined;
    let failure: { err: unknown } | undefined;
    try {
      const token = this.options.installationKey.runnerToken(applied);
      // Written beside the runtime's own objects; a runtime that mounts it waits for it.
      const tokenStored = this.ensureToken(applied, token);
      const context = {
        tokenSecretName: tokenSecretName(applied),
        token,
        tokenStored,
        finalizerStored,
        cache: caches,
      };
      [observation] = await Promise.all([runtime.apply(applied, context, signal), tokenStored]);
    } catch (err) {
      failure = { err };
    }
    // The finalizer's own failure (deleted or changed meanwhile) fails the pass, as when it came first.
    const current = await finalizerStored;
    if (failure !== undefined)
      this.options.logger.warn(
        { err: failure.err, agentComputer: request },
        'converging the workload failed',
      );
    return this.writeOutcome(request, current, observation, failure, activity);
  }

  /** The status of a pass, written when it changed, and what comes next. */
  private async writeOutcome(
    request: ReconcileRequest,
    current: AgentComputer,
    observation: WorkloadObservation | undefined,
    error: { err: unknown } | undefined,
    activity: WorkspaceActivity,
  ): Promise<ReconcileResult> {
    const { store, caches } = this.options;
    const failure = error === undefined ? undefined : describeError(error.err);
    const status = this.withActivity(
      current,
      computeAgentComputerStatus(current, observation, failure, this.now()),
    );
    await writeStatus(store, AgentComputerType, current, status, { caches });
    await this.recordTransitions(current, status);
    if (failure !== undefined)
      throw new Error(`converging ${request.namespace ?? ''}/${request.name}: ${failure}`);
    const becameReady =
      isTrue({ ...current, status }, AgentComputerConditions.Ready) &&
      !isTrue(current, AgentComputerConditions.Ready);
    this.options.connections?.keep({ ...current, status }, becameReady);
    return { requeueAfterMs: this.requeueAfter(current, status, observation, activity) };
  }

  private runtimeNameOf(ac: AgentComputer): Runtime {
    return ac.spec.runtime ?? this.options.defaultRuntime;
  }

  /**
   * A runtime this operator does not run: the status says so (REST `error`, naming it and what to
   * enable). Nothing was made for it, so a deletion needs no finalizing, unless the runtime was
   * enabled once and made something: then the finalizer holds until it runs again.
   */
  private async refuseRuntime(ac: AgentComputer): Promise<void> {
    const name = this.runtimeNameOf(ac);
    if (ac.metadata.deletionTimestamp !== undefined) {
      this.options.logger.warn(
        { agentComputer: ac.metadata.name, namespace: ac.metadata.namespace, runtime: name },
        'cannot remove the workload of a runtime this operator does not run',
      );
      return;
    }
    const status = runtimeNotEnabledStatus(ac, name, [...this.options.runtimes.keys()], this.now());
    await writeStatus(this.options.store, AgentComputerType, ac, status);
    await this.recordTransitions(ac, status);
  }

  /** The AgentComputer is gone: nothing is kept for it. */
  private gone(request: ReconcileRequest): void {
    this.options.connections?.forget(request.namespace ?? '', request.name);
  }

  private async finalize(ac: AgentComputer, runtime: WorkloadRuntime): Promise<void> {
    this.options.connections?.forget(ac.metadata.namespace ?? '', ac.metadata.name);
    if (!(ac.metadata.finalizers ?? []).includes(WORKLOAD_FINALIZER)) return;
    await runtime.remove(ac);
    // Garbage collection would get it too, but only once the collector knows the CRD (up to ~30 s).
    await deleteControlled(
      this.options.store,
      SecretType,
      ac.metadata.namespace ?? '',
      tokenSecretName(ac),
      ac.metadata.uid ?? '',
    );
    await this.options.objectStore?.deletePrefix(
      artifactPrefix(ac.metadata.namespace ?? '', ac.metadata.name),
    );
    const finalizers = (ac.metadata.finalizers ?? []).filter((f) => f !== WORKLOAD_FINALIZER);
    try {
      await this.options.store.replace(AgentComputerType, {
        ...ac,
        metadata: { ...ac.metadata, finalizers },
      });
    } catch (err) {
      // A pass that read the object before an earlier pass removed the finalizer finds it gone: done.
      if (!isStoreError(err, 'NotFound')) throw err;
    }
  }

  /**
   * Holds a deletion until finalize() ran the runtime's remove(). For a runtime whose objects owner
   * references collect (pod, kubevirt) it is written beside them, not first, and the workload itself
   * (Pod, VM) waits for it. A deletion racing that first pass is safe either way:
   * - it comes before the finalizer write: the AgentComputer, holding no finalizer, is gone at once;
   *   the write fails (NotFound or Conflict) and fails the pass, so no Pod or VM is ever made; the
   *   token Secret, PVC, Service or NetworkPolicy made meanwhile name the gone uid as controller,
   *   and the garbage collector deletes objects whose owner no longer exists, also those created
   *   after it went. Nothing ran, so there are no artifacts to remove either.
   * - it comes after: the finalizer holds the AgentComputer and the next pass finalizes it.
   * The process runtime's process is no cluster object: it is written first, alone, as before.
   */
  private async ensureFinalizer(ac: AgentComputer): Promise<AgentComputer> {
    if ((ac.metadata.finalizers ?? []).includes(WORKLOAD_FINALIZER)) return ac;
    const finalizers = [...(ac.metadata.finalizers ?? []), WORKLOAD_FINALIZER];
    const written = await this.options.store.replace(AgentComputerType, {
      ...ac,
      metadata: { ...ac.metadata, finalizers },
    });
    this.options.caches?.observe(AgentComputerType, written);
    return written;
  }

  /**
   * The runner's token, derived from the installation key (so the API server can compute it too),
   * kept in a Secret the AgentComputer owns for runtimes that mount it; never in spec or status.
   */
  private async ensureToken(ac: AgentComputer, token: string): Promise<void> {
    const secret = {
      name: tokenSecretName(ac),
      type: 'agentry.dev/runner-token',
      labels: workloadLabels(ac),
    };
    await ensureWorkloadToken(this.options.store, ac, secret, token, this.options.caches);
  }

  /** When the workspace counts as idle: idleTimeout after its latest use (becoming ready, or a prompt). */
  private idleDeadline(ac: AgentComputer, activity: WorkspaceActivity): number | undefined {
    const idleMs = parseDuration(ac.spec.idleTimeout);
    // Only a running, ready workspace idles: one still booting has not been usable yet.
    const ready = isTrue(ac, AgentComputerConditions.Ready);
    if (idleMs === 0 || ac.spec.operatingMode !== 'Running' || !ready || activity.busy) return undefined;
    // Preview traffic counts too: the API stamps it (at most once a minute) on the annotation.
    const previewedAt = ac.metadata.annotations?.[LAST_PREVIEW_AT_ANNOTATION];
    // A claimed pool member may have waited ready for longer than its new idleTimeout: its claim
    // is its first use, so the clock starts there too.
    const claimedAt = ac.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION];
    const times = [
      ac.status?.lastActivityAt ?? ac.metadata.creationTimestamp,
      activity.lastAt,
      previewedAt,
      claimedAt,
    ]
      .filter((time) => time !== undefined)
      .map((time) => Date.parse(time))
      .filter((time) => !Number.isNaN(time)); // an unreadable annotation says nothing
    return times.length === 0 ? undefined : Math.max(...times) + idleMs;
  }

  /** Idle for idleTimeout: hibernate, as if the user had asked, saying so in an annotation. */
  private async hibernateIfIdle(ac: AgentComputer, activity: WorkspaceActivity): Promise<boolean> {
    const deadline = this.idleDeadline(ac, activity);
    if (deadline === undefined || deadline > this.now().getTime()) return false;
    const annotations = { ...ac.metadata.annotations, [HIBERNATED_BY_ANNOTATION]: 'idle-timeout' };
    await this.options.store.replace(AgentComputerType, {
      ...ac,
      metadata: { ...ac.metadata, annotations },
      spec: { ...ac.spec, operatingMode: 'Hibernated' },
    });
    this.options.logger.info(
      { agentComputer: ac.metadata.name, namespace: ac.metadata.namespace },
      'hibernated after idle timeout',
    );
    await this.options.events?.record(
      ac,
      'Normal',
      AgentComputerEventReasons.IdleTimeout,
      `no activity for ${ac.spec.idleTimeout}; hibernating`,
    );
    return true;
  }

  /** A (re)start counts as activity, so a resumed workspace is not hibernated again at once. */
  /**
   * Becoming ready counts as activity (first start and every resume), so the idle clock starts when
   * the workspace can be used, not while it boots.
   */
  private withActivity(ac: AgentComputer, status: AgentComputerStatus): AgentComputerStatus {
    const { Ready } = AgentComputerConditions;
    const becameReady = isTrue({ ...ac, status }, Ready) && !isTrue(ac, Ready);
    return becameReady ? { ...status, lastActivityAt: isoMillis(this.now()) } : status;
  }

  /** Kubernetes Events for the transitions a person watching `kubectl describe` cares about. */
  private async recordTransitions(ac: AgentComputer, next: AgentComputerStatus): Promise<void> {
    const events = this.options.events;
    if (events === undefined) return;
    const { Ready, Hibernated } = AgentComputerConditions;
    const became = (type: AgentComputerConditionType) =>
      isTrue({ ...ac, status: next }, type) && !isTrue(ac, type);
    if (next.provisionError !== undefined && next.provisionError !== ac.status?.provisionError) {
      await events.record(ac, 'Warning', AgentComputerEventReasons.ProvisionFailed, next.provisionError);
    }
    if (became(Ready)) {
      await events.record(
        ac,
        'Normal',
        AgentComputerEventReasons.RunnerReady,
        `the runner in ${next.sandboxId ?? 'the workload'} is ready`,
      );
    }
    if (became(Hibernated)) {
      await events.record(
        ac,
        'Normal',
        AgentComputerEventReasons.Hibernated,
        'the workload is stopped; its disk is kept',
      );
    }
  }

  private requeueAfter(
    ac: AgentComputer,
    status: AgentComputerStatus,
    obs: WorkloadObservation | undefined,
    activity: WorkspaceActivity,
  ): number | undefined {
    if (ac.spec.operatingMode === 'Running' && obs?.ready !== true && obs?.provisionError === undefined) {
      return NOT_READY_SAFETY_REQUEUE_MS;
    }
    const deadline = this.idleDeadline({ ...ac, status }, activity);
    return deadline === undefined ? undefined : Math.max(deadline - this.now().getTime(), 1_000);
  }
}

const isoMillis = (date: Date): string => date.toISOString();
