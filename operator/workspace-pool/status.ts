import { WorkspacePoolConditions, WorkspacePoolReasons } from '../../crds/index.js';
import type {
  WorkspacePool,
  WorkspacePoolConditionType,
  WorkspacePoolReason,
  WorkspacePoolStatus,
} from '../../crds/index.js';
import { findCondition, setCondition } from '../../crds/conditions.js';
import type { ConditionInput } from '../../crds/conditions.js';
import type { PoolCensus } from './census.js';

type PoolCondition = ConditionInput<WorkspacePoolConditionType, WorkspacePoolReason>;

/** What a pass saw: the census, and the desired count (undefined when the spec is invalid). */
export interface PoolObservation {
  census: PoolCensus;
  desired: number | undefined;
  /** Why the store refused to make a member this pass (quota, permissions), if it did. */
  makeError?: string | undefined;
}

/** The Ready condition: why the pool can or cannot hand out a member at once. */
export function readyCondition(pool: WorkspacePool, observation: PoolObservation): PoolCondition {
  const { census, desired } = observation;
  const type = WorkspacePoolConditions.Ready;
  const { minReady, maxReady } = pool.spec;
  if (desired === undefined) {
    return {
      type,
      status: 'False',
      reason: WorkspacePoolReasons.InvalidSpec,
      message: `spec.maxReady (${String(maxReady)}) is below spec.minReady (${String(minReady)}); no members are made until it is fixed`,
    };
  }
  if (observation.makeError !== undefined) {
    return {
      type,
      status: 'False',
      reason: WorkspacePoolReasons.RefillFailed,
      message: `cannot make members: ${observation.makeError}`,
    };
  }
  if (census.failure !== undefined) {
    return {
      type,
      status: 'False',
      reason: WorkspacePoolReasons.RefillFailed,
      message: `member ${census.failure.member} cannot start: ${census.failure.message}`,
    };
  }
  const ready = census.ready.length;
  if (ready >= desired) {
    return {
      type,
      status: 'True',
      reason: WorkspacePoolReasons.Filled,
      message: `${ready} of ${desired} members ready`,
    };
  }
  // A failure stays reported while its replacements start: until the pool is filled, the last
  // failure says more than "refilling" (and the condition does not flap with each replacement).
  const previous = findCondition(pool.status?.conditions, type);
  if (previous?.reason === WorkspacePoolReasons.RefillFailed && previous.status === 'False') {
    return {
      type,
      status: 'False',
      reason: WorkspacePoolReasons.RefillFailed,
      message: previous.message,
    };
  }
  return {
    type,
    status: 'False',
    reason: WorkspacePoolReasons.Refilling,
    message: `${ready} of ${desired} members ready, ${census.provisioning.length} starting`,
  };
}

/** The pool's status for this observation; lastTransitionTime kept when Ready did not flip. */
export function computePoolStatus(
  pool: WorkspacePool,
  observation: PoolObservation,
  now: Date,
): WorkspacePoolStatus {
  const { census, desired } = observation;
  const generation = pool.metadata.generation;
  return {
    observedGeneration: generation,
    conditions: setCondition(pool.status?.conditions, readyCondition(pool, observation), generation, now),
    ...(desired === undefined ? {} : { desired }),
    ready: census.ready.length,
    provisioning: census.provisioning.length,
    claimed: census.claimed,
  };
}
