// Pure arithmetic of a warm pool (docs/adr/0008-warm-pools.md): what its members are, how many it
// aims for, and which to make or remove. No I/O, so table-tested in test/unit.
import {
  AgentComputerConditions,
  POOL_CLAIMED_AT_ANNOTATION,
  isPoolMemberIn,
  PoolMemberStates,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePoolSpec } from '../../crds/index.js';
import { isTrueForGeneration } from '../../crds/conditions.js';

/** Claims this recent count as demand: the pool grows by them, up to maxReady. */
export const DEMAND_WINDOW_MS = 60_000;

/** A member that cannot start, and why (its provisionError). */
export interface MemberFailure {
  member: string;
  message: string;
}

/** The pool's members, sorted by what they are now; those being deleted count nowhere. */
export interface PoolCensus {
  /** Available and Ready for their generation: a claim gets one at once. */
  ready: AgentComputer[];
  /** Available, not ready yet (being made or starting). */
  provisioning: AgentComputer[];
  /** Available but unable to start (a provisionError): replaced, not waited for. */
  failed: AgentComputer[];
  /** Claimed from this pool and still there. */
  claimed: number;
  /** When each claim of the demand window was made (ms since the epoch), oldest first. */
  recentClaims: number[];
  /** The first available member that reports a provisionError, if any. */
  failure: MemberFailure | undefined;
}

const isAvailable = (ac: AgentComputer): boolean => isPoolMemberIn(ac, PoolMemberStates.Available);
const isClaimed = (ac: AgentComputer): boolean => isPoolMemberIn(ac, PoolMemberStates.Claimed);

/** When a claimed member was claimed, or undefined when the annotation is missing or unreadable. */
function claimedAt(ac: AgentComputer): number | undefined {
  const written = ac.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION];
  const time = written === undefined ? NaN : Date.parse(written);
  return Number.isNaN(time) ? undefined : time;
}

/** Sorts `members` (every AgentComputer labelled for the pool) into a census at `now`. */
export function takeCensus(members: readonly AgentComputer[], now: Date): PoolCensus {
  const live = members.filter((ac) => ac.metadata.deletionTimestamp === undefined);
  const available = live.filter(isAvailable);
  const claimed = live.filter(isClaimed);
  const since = now.getTime() - DEMAND_WINDOW_MS;
  const recentClaims = claimed
    .map(claimedAt)
    .filter((time): time is number => time !== undefined && time > since)
    .sort((a, b) => a - b);
  const failed = available.filter((ac) => ac.status?.provisionError !== undefined);
  const starting = available.filter((ac) => ac.status?.provisionError === undefined);
  const [firstFailed] = failed;
  return {
    ready: starting.filter((ac) => isTrueForGeneration(ac, AgentComputerConditions.Ready)),
    provisioning: starting.filter((ac) => !isTrueForGeneration(ac, AgentComputerConditions.Ready)),
    failed,
    claimed: claimed.length,
    recentClaims,
    failure:
      firstFailed === undefined
        ? undefined
        : { member: firstFailed.metadata.name, message: firstFailed.status?.provisionError ?? '' },
  };
}

/** Whether maxReady is below minReady: the pool makes nothing until the spec is fixed. */
export const isInvalidSpec = (spec: WorkspacePoolSpec): boolean =>
  spec.maxReady !== undefined && spec.maxReady < spec.minReady;

/** minReady plus the recent claims, within [minReady, maxReady ?? minReady]. */
export function desiredCount(spec: WorkspacePoolSpec, recentClaims: number): number {
  const upper = Math.max(spec.maxReady ?? spec.minReady, spec.minReady);
  return Math.min(Math.max(spec.minReady + recentClaims, spec.minReady), upper);
}

/** What a pass changes: members to make, and available members to delete. */
export interface RefillPlan {
  create: number;
  remove: AgentComputer[];
}

const newestFirst = (a: AgentComputer, b: AgentComputer): number =>
  (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
  b.metadata.name.localeCompare(a.metadata.name);

/**
 * Brings the available members to `desired`: removes failed ones and makes replacements (the
 * refill rate bounds the churn of a template that never starts, and the pool's condition says
 * why); of a surplus, removes those still provisioning first (nobody can claim them yet), then the
 * newest ready ones. Claimed members are not the pool's any more and are never touched.
 */
export function planRefill(census: PoolCensus, desired: number): RefillPlan {
  const failed = [...census.failed];
  const available = census.ready.length + census.provisioning.length;
  if (available <= desired) return { create: desired - available, remove: failed };
  const candidates = [...[...census.provisioning].sort(newestFirst), ...[...census.ready].sort(newestFirst)];
  return { create: 0, remove: [...failed, ...candidates.slice(0, available - desired)] };
}

/** When the oldest claim leaves the demand window (the desired count may fall then), if any. */
export function demandWindowEnds(census: PoolCensus): number | undefined {
  const [oldest] = census.recentClaims;
  return oldest === undefined ? undefined : oldest + DEMAND_WINDOW_MS;
}
