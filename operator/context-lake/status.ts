import { ContextLakeConditions, ContextLakeReasons } from '../../crds/index.js';
import type {
  ContextLake,
  ContextLakeConditionType,
  ContextLakeReason,
  ContextLakeStatus,
  Dataset,
  DatasetStatus,
  VmStatus,
} from '../../crds/index.js';
import { connectorOf } from '../../platform/lake-config/dataset-source.js';
import type { LakeDatasetState, LakeStatus } from '../../platform/lake-protocol.js';
import type { DatasetFacts } from '../../crds/context-lake/types.js';
import { factsToWrite, isoOf } from './dataset-facts.js';
import { redactSecrets } from './resolve-config.js';
import type { WorkloadObservation } from '../runtimes/types.js';
import { isTrue, setConditions } from '../../crds/conditions.js';
import type { ConditionInput } from '../../crds/conditions.js';

type LakeCondition = ConditionInput<ContextLakeConditionType, ContextLakeReason>;

/**
 * What one reconcile pass found out about a ContextLake, as input to the pure status functions
 * below (agent-sandbox's computeReadyCondition habit: no I/O here).
 */
export interface LakePass {
  /** Hibernated and never started: nothing was made for it. */
  notProvisioned: boolean;
  /** What the runtime reported; undefined when not provisioned or when converging failed. */
  workload: WorkloadObservation | undefined;
  /** Why converging the workload failed (a thrown error), in one line. */
  failure?: string | undefined;
  /** What the lake server answered, when it did. */
  lake?: LakeStatus | undefined;
  /** Why the lake server did not answer although its workload is ready. */
  lakeProblem?: string | undefined;
  /** Why the configuration cannot be applied (Ready False, ConfigInvalid). Names keys, never values. */
  configProblem?: string | undefined;
  /** Credential values to keep out of anything copied from the lake into status. */
  secretValues: readonly string[];
}

/** The part of the status this reconciler owns; the rest (S3 counters, notifications) belongs to others. */
export interface OwnedLakeStatus {
  generation: number | undefined;
  vmStatus: VmStatus;
  endpoint: string | undefined;
  lastActivityAt: string | undefined;
  datasets: Record<
    string,
    Pick<DatasetStatus, 'ok' | 'status' | 'connectorId' | 'notifications' | 'error'> & DatasetFacts
  >;
  conditions: LakeCondition[];
}

/**
 * vmStatus describes the machine: `running` once the lake server answers (even while it loads a
 * configuration: it serves what it has), `provisioning` before, `paused` when hibernated,
 * `not_provisioned` when never started, `error` when the workload cannot start without a change.
 */
export function lakeVmStatus(lake: ContextLake, pass: LakePass): VmStatus {
  if (pass.notProvisioned) return 'not_provisioned';
  if (lake.spec.operatingMode === 'Hibernated') return 'paused';
  if (pass.failure !== undefined || pass.workload?.provisionError !== undefined) return 'error';
  return pass.lake === undefined ? 'provisioning' : 'running';
}

type LakeDatasetStatus = LakeDatasetState['status'];

/** Each configured dataset's state on the lake, in config order; one it does not list yet is pending. */
const datasetStates = (lake: ContextLake, status: LakeStatus): LakeDatasetStatus[] =>
  lake.spec.config.datasets.map((dataset) => status.datasets[dataset.name]?.status ?? 'pending');

/** Past its first load: served (ready, refreshing) or failed. */
const pastFirstLoad = (state: LakeDatasetStatus): boolean => state !== 'pending' && state !== 'loading';

/** Whether the lake serves this generation with every dataset past its first load. */
export function lakeApplied(lake: ContextLake, status: LakeStatus | undefined): boolean {
  if (status?.generation !== (lake.metadata.generation ?? 0)) return false;
  return datasetStates(lake, status).every(pastFirstLoad);
}

/**
 * A dataset's entry: its state on the lake, and what its table holds. While the lake does not
 * report it (paused, starting) the facts stored stay: the lake's disk still holds that data.
 */
function datasetEntry(
  dataset: Dataset,
  vmStatus: VmStatus,
  pass: LakePass,
  stored: DatasetStatus | undefined,
): OwnedLakeStatus['datasets'][string] {
  const state = pass.lake?.datasets[dataset.name];
  const base = {
    connectorId: connectorOf(dataset.from) ?? 'unknown',
    notifications: dataset.notifications ?? false,
    ...factsToWrite(state, stored),
  };
  if (vmStatus !== 'running' && vmStatus !== 'provisioning') return { ...base, ok: false, status: 'unknown' };
  if (state === undefined) return { ...base, ok: false, status: 'pending' };
  const ok = state.status === 'ready' || state.status === 'refreshing';
  if (state.status !== 'error') return { ...base, ok, status: state.status };
  const error = redactSecrets(state.error ?? 'loading failed', pass.secretValues).slice(0, 4096);
  return { ...base, ok, status: 'error', error };
}

function provisionedCondition(pass: LakePass): LakeCondition {
  const type = ContextLakeConditions.Provisioned;
  if (pass.notProvisioned)
    return {
      type,
      status: 'False',
      reason: ContextLakeReasons.NotProvisioned,
      message: 'the lake has never been started',
    };
  const obs = pass.workload;
  if (obs?.provisionError !== undefined)
    return {
      type,
      status: 'False',
      reason: obs.provisionErrorReason ?? ContextLakeReasons.ProvisionFailed,
      message: obs.provisionError,
    };
  if (obs === undefined)
    return {
      type,
      status: 'False',
      reason: ContextLakeReasons.Provisioning,
      message: pass.failure ?? 'not observed yet',
    };
  return {
    type,
    status: obs.provisioned ? 'True' : 'False',
    reason: obs.provisioned ? ContextLakeReasons.Provisioned : ContextLakeReasons.Provisioning,
    message: obs.message,
  };
}

function loadedMessage(lake: ContextLake, status: LakeStatus): string {
  const states = datasetStates(lake, status);
  const ready = states.filter((s) => s === 'ready' || s === 'refreshing').length;
  const failed = states.filter((s) => s === 'error').length;
  const views = Object.entries(status.views)
    .filter(([, view]) => !view.ok)
    .map(([name]) => name);
  const viewNote = views.length === 0 ? '' : `; views failing: ${views.join(', ')}`;
  return `generation ${String(lake.metadata.generation ?? 0)} applied: ${ready} of ${states.length} datasets ready, ${failed} failed${viewNote}`;
}

/**
 * Ready means "the lake server answers and serves this generation's configuration" (every dataset
 * past its first load, possibly failed: failures show per dataset). While a new generation loads
 * it is False (reason Loading) although the old data is still served.
 */
function notServing(
  vmStatus: VmStatus,
  pass: LakePass,
): [reason: ContextLakeReason, message: string] | undefined {
  const { Paused, Failed, ConfigInvalid } = ContextLakeReasons;
  if (vmStatus === 'not_provisioned') return [Paused, 'the lake has never been started'];
  if (vmStatus === 'paused') return [Paused, 'the lake is paused; a query or POST /start resumes it'];
  if (vmStatus === 'error')
    return [Failed, pass.failure ?? pass.workload?.provisionError ?? 'the workload failed'];
  if (pass.configProblem !== undefined) return [ConfigInvalid, pass.configProblem];
  return undefined;
}

function readyCondition(lake: ContextLake, pass: LakePass, vmStatus: VmStatus): LakeCondition {
  const type = ContextLakeConditions.Ready;
  const not = (reason: ContextLakeReason, message: string): LakeCondition => ({
    type,
    status: 'False',
    reason,
    message,
  });
  const stopped = notServing(vmStatus, pass);
  if (stopped !== undefined) return not(...stopped);
  const status = pass.lake;
  if (status === undefined)
    return not(
      ContextLakeReasons.Starting,
      pass.lakeProblem ?? pass.workload?.message ?? 'the lake server is starting',
    );
  if (!lakeApplied(lake, status)) {
    const states = datasetStates(lake, status);
    const done = states.filter(pastFirstLoad).length;
    return not(
      ContextLakeReasons.Loading,
      `loading generation ${String(lake.metadata.generation ?? 0)}: ${done} of ${states.length} datasets loaded`,
    );
  }
  return { type, status: 'True', reason: ContextLakeReasons.Loaded, message: loadedMessage(lake, status) };
}

const latest = (...times: (string | undefined)[]): string | undefined =>
  times
    .filter((time): time is string => time !== undefined && !Number.isNaN(Date.parse(time)))
    .sort((a, b) => Date.parse(a) - Date.parse(b))
    .at(-1);

/** The status this reconciler wants, from one pass; merged onto the stored status by mergeLakeStatus. */
export function computeLakeStatus(lake: ContextLake, pass: LakePass, now: Date): OwnedLakeStatus {
  const vmStatus = lakeVmStatus(lake, pass);
  const ready = readyCondition(lake, pass, vmStatus);
  // Becoming ready counts as use (first start and every resume): the idle clock starts when it can serve.
  const becameReady = ready.status === 'True' && !isTrue(lake, ContextLakeConditions.Ready);
  const lastQueryAt = pass.lake?.lastQueryAt;
  return {
    generation: lake.metadata.generation,
    vmStatus,
    endpoint: pass.workload?.endpoint,
    lastActivityAt: latest(
      lake.status?.lastActivityAt,
      isoOf(lastQueryAt),
      becameReady ? now.toISOString() : undefined,
    ),
    datasets: Object.fromEntries(
      lake.spec.config.datasets.map((dataset) => [
        dataset.name,
        datasetEntry(dataset, vmStatus, pass, lake.status?.datasets?.[dataset.name]),
      ]),
    ),
    conditions: [provisionedCondition(pass), ready],
  };
}

/** Each configured dataset's entry, with the S3 counters the notification consumer wrote kept. */
function mergeDatasets(
  base: ContextLakeStatus['datasets'],
  owned: OwnedLakeStatus['datasets'],
): NonNullable<ContextLakeStatus['datasets']> {
  const datasets: NonNullable<ContextLakeStatus['datasets']> = {};
  for (const [name, entry] of Object.entries(owned)) {
    const { s3EventCount, s3LastEventAt, s3LastRefreshAt } = base?.[name] ?? {};
    datasets[name] = {
      ...entry,
      ...(s3EventCount === undefined ? {} : { s3EventCount }),
      ...(s3LastEventAt === undefined ? {} : { s3LastEventAt }),
      ...(s3LastRefreshAt === undefined ? {} : { s3LastRefreshAt }),
    };
  }
  return datasets;
}

/**
 * The full status to write: `base` (the stored status, possibly newer than the one the pass read)
 * with this reconciler's fields set. Other writers' fields stay: each dataset's S3 counters, the
 * notifications block, the NotificationsReady condition. Datasets no longer configured are dropped.
 */
export function mergeLakeStatus(
  base: ContextLakeStatus | undefined,
  owned: OwnedLakeStatus,
  now: Date,
): ContextLakeStatus {
  const datasets = mergeDatasets(base?.datasets, owned.datasets);
  const conditions = setConditions(base?.conditions, owned.conditions, owned.generation, now);
  const next: ContextLakeStatus = { ...base, vmStatus: owned.vmStatus, datasets, conditions };
  if (owned.generation !== undefined) next.observedGeneration = owned.generation;
  const lastActivityAt = latest(base?.lastActivityAt, owned.lastActivityAt);
  if (lastActivityAt !== undefined) next.lastActivityAt = lastActivityAt;
  if (owned.endpoint === undefined) delete next.endpoint;
  else next.endpoint = owned.endpoint;
  return next;
}
