import {
  CONTEXT_LAKE_SECRET_NAME,
  ContextLakeConditions,
  ContextLakeEventReasons,
  ContextLakeReasons,
  ContextLakeType,
  HIBERNATED_BY_ANNOTATION,
  SecretType,
} from '../../crds/index.js';
import type { ContextLake, Runtime } from '../../crds/index.js';
import { findCondition, isTrue } from '../../crds/conditions.js';
import { parseDuration } from '../../platform/duration.js';
import type { EventRecorder } from '../../platform/events.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { LakeConfigSync } from './config-sync.js';
import { recordLakeTransitions } from './lake-events.js';
import { updateStatus } from '../../platform/store/status-writer.js';
import { ensureWorkloadToken } from '../runtimes/workload-token.js';
import { deleteControlled } from '../runtimes/ensure-object.js';
import { describeError } from '../../platform/describe-error.js';
import type { WorkloadRuntime } from '../runtimes/types.js';
import { workloadLabels } from '../runtimes/types.js';
import type { LakeQueryMetrics } from './query-metrics.js';
import { computeLakeStatus, mergeLakeStatus } from './status.js';
import type { LakePass } from './status.js';

/** Holds deletion until the runtime removed what owner references cannot (a local process). */
export const LAKE_WORKLOAD_FINALIZER = 'agentry.dev/workload';

/**
 * A safety net only: a lake whose workload is not ready yet (or still stopping) is woken by its
 * workload's own objects' watch events (Pod, VM, Service, PVC) or the process runtime's notice;
 * this catches a missed one. It was looked at every 2 s while it booted.
 */
export const LAKE_WORKLOAD_SAFETY_REQUEUE_MS = 30_000;

export interface ContextLakeReconcilerOptions {
  store: ResourceStore;
  /** The manager's informer caches of the kinds the runtimes make: the runtimes read them, not the store. */
  caches?: Caches | undefined;
  events?: EventRecorder | undefined;
  runtimes: ReadonlyMap<Runtime, WorkloadRuntime>;
  defaultRuntime: Runtime;
  logger: Logger;
  installationKey: InstallationKey;
  /**
   * How often a lake whose server answers but has not loaded this generation (or does not answer
   * although its workload is ready) is looked at again: nothing is watched there. Default 2 s.
   */
  busyPollMs?: number;
  /** How often a running lake's status (datasets, last query) is read. Default 30 s. */
  runningPollMs?: number;
  /** Told each lake's query counts as read with its status. */
  queryMetrics?: LakeQueryMetrics | undefined;
  now?: () => Date;
}

/** The Secret (owned by the ContextLake) holding the lake server's token. */
export const lakeTokenSecretName = (lake: ContextLake): string => `${lake.metadata.name}-lake-token`;

/**
 * Converges a ContextLake (docs/architecture.md#the-context-lake): the token Secret, the lake server in its runtime, its
 * configuration (secret references resolved, pushed when the lake serves another generation), idle
 * hibernation, and status (vmStatus, per-dataset status, conditions), written once per pass with
 * resourceVersion checks so the S3 counters others write are never lost.
 */
export class ContextLakeReconciler implements Reconciler {
  private readonly now: () => Date;
  private readonly configSync = new LakeConfigSync();

  constructor(private readonly options: ContextLakeReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const { store } = this.options;
    const lake = await store.get(ContextLakeType, request.namespace, request.name);
    if (lake === undefined) return undefined;
    const runtime = this.runtimeOf(lake);
    if (lake.metadata.deletionTimestamp !== undefined) {
      this.noteQueries(lake, undefined);
      await this.finalize(lake, runtime);
      return undefined;
    }
    const current = await this.ensureFinalizer(lake);
    const pass = await this.converge(current, runtime, signal);
    this.noteQueries(current, pass);
    const owned = computeLakeStatus(current, pass, this.now());
    // Merged onto the stored status, re-read on a conflict: the S3 counters the notification consumer writes survive.
    const written = await updateStatus(
      store,
      ContextLakeType,
      { namespace: current.metadata.namespace ?? '', name: current.metadata.name },
      (base) => mergeLakeStatus(base.status, owned, this.now()),
      { read: current },
    );
    if (written === undefined) return undefined; // deleted meanwhile
    if (this.options.events !== undefined)
      await recordLakeTransitions(this.options.events, current, written, pass);
    if (pass.failure !== undefined)
      throw new Error(`converging ${request.namespace ?? ''}/${request.name}: ${pass.failure}`);
    if (await this.hibernateIfIdle(written)) return undefined; // the spec change wakes us again
    return { requeueAfterMs: this.requeueAfter(written, pass) };
  }

  /** The lake's query counts for the metrics; none once it does not answer or is deleted. */
  private noteQueries(lake: ContextLake, pass: LakePass | undefined): void {
    this.options.queryMetrics?.observe(lake.metadata.namespace ?? '', pass?.lake?.queries);
  }

  private runtimeOf(lake: ContextLake): WorkloadRuntime {
    const name = lake.spec.runtime ?? this.options.defaultRuntime;
    const runtime = this.options.runtimes.get(name);
    if (runtime === undefined) throw new Error(`runtime ${name} is not enabled in this operator`);
    return runtime;
  }

  /** Runs the workload as the spec says and, once it is up, brings the lake server to this generation. */
  private async converge(
    lake: ContextLake,
    runtime: WorkloadRuntime,
    signal: AbortSignal,
  ): Promise<LakePass> {
    const pass: LakePass = { notProvisioned: false, workload: undefined, secretValues: [] };
    // A lake that never ran and is not asked to: nothing is made for it (most organizations never query).
    if (lake.spec.operatingMode === 'Hibernated' && !(await this.everStarted(lake)))
      return { ...pass, notProvisioned: true };
    let token: string;
    try {
      token = this.options.installationKey.runnerToken(lake);
      const { caches: cache } = this.options;
      const secret = {
        name: lakeTokenSecretName(lake),
        type: 'agentry.dev/lake-token',
        labels: workloadLabels(lake),
      };
      // Written beside the runtime's own objects; a runtime that mounts it waits for it.
      const tokenStored = ensureWorkloadToken(this.options.store, lake, secret, token, cache);
      const context = { tokenSecretName: secret.name, token, tokenStored, cache };
      [pass.workload] = await Promise.all([runtime.apply(lake, context, signal), tokenStored]);
    } catch (err) {
      this.options.logger.warn({ err, contextLake: lake.metadata.namespace }, 'converging the lake failed');
      return { ...pass, failure: describeError(err) };
    }
    const endpoint = pass.workload.endpoint;
    if (lake.spec.operatingMode !== 'Running' || !pass.workload.ready || endpoint === undefined) return pass;
    return this.syncConfig(lake, pass, { endpoint, token });
  }

  /** Its status says it ran, or (a status lost, say) its token Secret, made on the first start, exists. */
  private async everStarted(lake: ContextLake): Promise<boolean> {
    if ((lake.status?.vmStatus ?? 'not_provisioned') !== 'not_provisioned') return true;
    const token = await this.options.store.get(
      SecretType,
      lake.metadata.namespace,
      lakeTokenSecretName(lake),
    );
    return token !== undefined;
  }

  private async syncConfig(
    lake: ContextLake,
    pass: LakePass,
    where: { endpoint: string; token: string },
  ): Promise<LakePass> {
    const credentials = await this.options.store.get(
      SecretType,
      lake.metadata.namespace,
      CONTEXT_LAKE_SECRET_NAME,
    );
    const result = await this.configSync.sync(lake, where, credentials);
    switch (result.kind) {
      case 'unreachable':
        return { ...pass, lakeProblem: result.problem };
      case 'config-invalid':
        return {
          ...pass,
          lake: result.status,
          configProblem: result.problem,
          secretValues: result.secretValues,
        };
      case 'answered':
        if (result.pushed)
          this.options.logger.info(
            { namespace: lake.metadata.namespace, generation: lake.metadata.generation },
            'configuration pushed to the lake server',
          );
        return { ...pass, lake: result.status, secretValues: result.secretValues };
    }
  }

  private async finalize(lake: ContextLake, runtime: WorkloadRuntime): Promise<void> {
    if (!(lake.metadata.finalizers ?? []).includes(LAKE_WORKLOAD_FINALIZER)) return;
    await runtime.remove(lake);
    // Garbage collection would get it too, but only once the collector knows the CRD (up to ~30 s).
    await deleteControlled(
      this.options.store,
      SecretType,
      lake.metadata.namespace ?? '',
      lakeTokenSecretName(lake),
      lake.metadata.uid ?? '',
    );
    const finalizers = (lake.metadata.finalizers ?? []).filter((f) => f !== LAKE_WORKLOAD_FINALIZER);
    await this.options.store.replace(ContextLakeType, {
      ...lake,
      metadata: { ...lake.metadata, finalizers },
    });
  }

  private async ensureFinalizer(lake: ContextLake): Promise<ContextLake> {
    if ((lake.metadata.finalizers ?? []).includes(LAKE_WORKLOAD_FINALIZER)) return lake;
    const finalizers = [...(lake.metadata.finalizers ?? []), LAKE_WORKLOAD_FINALIZER];
    return this.options.store.replace(ContextLakeType, {
      ...lake,
      metadata: { ...lake.metadata, finalizers },
    });
  }

  /** When the lake counts as idle: idleTimeout after its last query (or becoming ready). */
  private idleDeadline(lake: ContextLake): number | undefined {
    const idleMs = parseDuration(lake.spec.idleTimeout);
    const ready = isTrue(lake, ContextLakeConditions.Ready);
    if (idleMs === 0 || lake.spec.operatingMode !== 'Running' || !ready) return undefined;
    const since = lake.status?.lastActivityAt ?? lake.metadata.creationTimestamp;
    return since === undefined ? undefined : Date.parse(since) + idleMs;
  }

  /** Idle for idleTimeout: hibernate, as if a user had asked, saying so in an annotation. */
  private async hibernateIfIdle(lake: ContextLake): Promise<boolean> {
    const deadline = this.idleDeadline(lake);
    if (deadline === undefined || deadline > this.now().getTime()) return false;
    const annotations = { ...lake.metadata.annotations, [HIBERNATED_BY_ANNOTATION]: 'idle-timeout' };
    await this.options.store.replace(ContextLakeType, {
      ...lake,
      metadata: { ...lake.metadata, annotations },
      spec: { ...lake.spec, operatingMode: 'Hibernated' },
    });
    this.options.logger.info(
      { namespace: lake.metadata.namespace },
      'context lake hibernated after idle timeout',
    );
    await this.options.events?.record(
      lake,
      'Normal',
      ContextLakeEventReasons.IdleTimeout,
      `no query for ${lake.spec.idleTimeout}; hibernating`,
    );
    return true;
  }

  /**
   * Its workload starting or stopping: its watch events wake it (a long safety requeue besides).
   * Its server loading: look again soon. Running (or stuck on something only a change fixes): every
   * runningPollMs, for the datasets' states and the last query, or at the idle deadline.
   */
  private requeueAfter(lake: ContextLake, pass: LakePass): number | undefined {
    const busy = this.options.busyPollMs ?? 2_000;
    const poll = this.options.runningPollMs ?? 30_000;
    if (lake.spec.operatingMode === 'Hibernated')
      return pass.workload?.running === true ? LAKE_WORKLOAD_SAFETY_REQUEUE_MS : undefined;
    if (!settled(lake)) return pass.workload?.ready === true ? busy : LAKE_WORKLOAD_SAFETY_REQUEUE_MS;
    const deadline = this.idleDeadline(lake);
    return deadline === undefined ? poll : Math.min(poll, Math.max(deadline - this.now().getTime(), 1_000));
  }
}

/** Ready, or stuck on something only a change of the spec, the Secret or the cluster fixes. */
function settled(lake: ContextLake): boolean {
  const ready = findCondition(lake.status?.conditions, ContextLakeConditions.Ready);
  if (ready === undefined) return false;
  const { ConfigInvalid, Failed } = ContextLakeReasons;
  return ready.status === 'True' || ready.reason === ConfigInvalid || ready.reason === Failed;
}
