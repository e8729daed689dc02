import { stringify } from 'yaml';
import { ContextLakeConditions, ContextLakeReasons } from '../../crds/context-lake/conditions.js';
import { findCondition, isTrueForGeneration } from '../../crds/conditions.js';
import { datasetFactsOf } from '../../crds/context-lake/types.js';
import type {
  ContextLake,
  Dataset,
  DatasetStatus,
  Spicepod,
  VmStatus,
} from '../../crds/context-lake/types.js';
import { connectorOf } from '../../platform/lake-config/dataset-source.js';

/** GET /config: the spicepod as YAML (keys in the spicepod's order) and as an object. */
export function presentConfig(config: Spicepod): { yaml: string; config: Spicepod } {
  const ordered: Spicepod = {
    version: config.version,
    kind: config.kind,
    name: config.name,
    datasets: config.datasets,
    views: config.views,
  };
  return { yaml: stringify(ordered), config: ordered };
}

/**
 * The REST `vmStatus`, derived from intent and observation (never stored by the API): what the
 * operator observed, except that a lake asked to run but not yet running is `provisioning`.
 */
export function vmStatusOf(lake: ContextLake | undefined): VmStatus {
  if (lake === undefined) return 'not_provisioned';
  const observed = lake.status?.vmStatus;
  if (lake.spec.operatingMode === 'Running') {
    return observed === undefined || observed === 'paused' || observed === 'not_provisioned'
      ? 'provisioning'
      : observed;
  }
  return observed ?? 'not_provisioned';
}

/** Provisioned reasons whose message the operator wrote for users (what to change or install). */
const USER_FACING_FAILURES: ReadonlySet<string> = new Set([
  ContextLakeReasons.ProvisionFailed,
  ContextLakeReasons.IsolationUnavailable,
]);

/**
 * Why a lake asked to run cannot, as the operator observed it for the current generation (an older
 * error may be cured by the change since); undefined while it may still come up. The message is the
 * workload's provisioning error, written for users, or a general one: never an internal message.
 */
export function lakeFailure(lake: ContextLake | undefined): string | undefined {
  if (lake?.spec.operatingMode !== 'Running' || lake.status?.vmStatus !== 'error') return undefined;
  if (lake.status.observedGeneration !== lake.metadata.generation) return undefined;
  const provisioned = findCondition(lake.status.conditions, ContextLakeConditions.Provisioned);
  return provisioned !== undefined &&
    USER_FACING_FAILURES.has(provisioned.reason) &&
    provisioned.message !== ''
    ? provisioned.message
    : 'the lake server failed to start';
}

/** What was last asked of the lake: POST /start (or a query) `running`, POST /stop or idleness `paused`. */
export const requestedModeOf = (lake: ContextLake | undefined): 'running' | 'paused' =>
  lake?.spec.operatingMode === 'Running' ? 'running' : 'paused';

/** A lake serving queries for its current configuration: Ready for this generation, with an address. */
export type ReadyLake = ContextLake & { status: { endpoint: string } };

export function lakeIsReady(lake: ContextLake | undefined): lake is ReadyLake {
  if (lake === undefined || lake.spec.operatingMode !== 'Running') return false;
  return isTrueForGeneration(lake, ContextLakeConditions.Ready) && lake.status?.endpoint !== undefined;
}

function datasetStatus(
  dataset: Dataset,
  observed: DatasetStatus | undefined,
  paused: boolean,
): DatasetStatus {
  const connectorId = connectorOf(dataset.from) ?? 'unknown';
  const counters =
    connectorId === 's3' && observed !== undefined
      ? {
          ...(observed.s3LastEventAt === undefined ? {} : { s3LastEventAt: observed.s3LastEventAt }),
          ...(observed.s3LastRefreshAt === undefined ? {} : { s3LastRefreshAt: observed.s3LastRefreshAt }),
          ...(observed.s3EventCount === undefined ? {} : { s3EventCount: observed.s3EventCount }),
        }
      : {};
  const notifications = dataset.notifications === true;
  // What the table holds, as the operator last copied it; kept while paused (the lake's disk holds it).
  const facts = datasetFactsOf(observed);
  // While paused nothing is served, whatever was observed before: docs/api.md#context-lake.
  if (paused) return { ok: false, status: 'unknown', connectorId, notifications, ...counters, ...facts };
  if (observed === undefined) return { ok: false, status: 'pending', connectorId, notifications };
  return {
    ok: observed.ok,
    status: observed.status,
    connectorId,
    notifications,
    ...(observed.error === undefined ? {} : { error: observed.error }),
    ...counters,
    ...facts,
  };
}

/**
 * GET /status (docs/api.md#context-lake): every dataset of the configuration, as the operator last
 * observed it; `pending` when it has not yet; `unknown` while the lake is paused.
 */
export function presentStatus(
  lake: ContextLake | undefined,
  config: Spicepod,
): { vmStatus: VmStatus; datasets: Record<string, DatasetStatus> } {
  const vmStatus = vmStatusOf(lake);
  const paused = vmStatus === 'paused';
  const observed = lake?.status?.datasets ?? {};
  return {
    vmStatus,
    datasets: Object.fromEntries(
      config.datasets.map((dataset) => [
        dataset.name,
        datasetStatus(dataset, observed[dataset.name], paused),
      ]),
    ),
  };
}
