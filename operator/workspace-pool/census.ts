// Pure arithmetic of a warm pool (docs/adr/0008-warm-pools.md): what its members are, how many it
// aims for, and which to make or remove. No I/O, so table-tested in test/unit.
import {
  AgentComputerConditions,
  CLAIM_QUIET_MS,
  claimedAt,
  isPoolMemberIn,
  isSpokenFor,
  PoolMemberStates,
  readyForCurrentSpec,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePoolSpec } from '../../crds/index.js';
import { findCondition } from '../../crds/conditions.js';

/** Claims this recent count as demand: the pool grows by them, up to maxReady. */
export const DEMAND_WINDOW_MS = 60_000;

/**
 * How long a member may report a provisionError before it is replaced: a Pod pending until the
 * cluster autoscaler adds a node, or an image pull that backs off and then succeeds, recovers by
 * itself, and replacing it would only churn Pods and disks.
 */
export const FAILED_MEMBER_GRACE_MS = 5 * 60_000;

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
  /** Available and unable to start (a provisionError) for longer than the grace: replaced, not waited for. */
  failed: AgentComputer[];
  /** When the next member still within its grace is due for replacement, if any (ms since the epoch). */
  nextReplacementAt: number | undefined;
  /** Claimed from this pool and still there. */
  claimed: number;
  /** When each claim of the demand window was made (ms since the epoch), oldest first. */
  recentClaims: number[];
  /** The first available member that reports a provisionError, if any. */
  failure: MemberFailure | undefined;
}

const isAvailable = (ac: AgentComputer): boolean => isPoolMemberIn(ac, PoolMemberStates.Available);
const isClaimed = (ac: AgentComputer): boolean => isPoolMemberIn(ac, PoolMemberStates.Claimed);

/** When a failing member is due for replacement: its failure's start (the Provisioned condition's transition) plus the grace. */
function replacementDueAt(ac: AgentComputer, graceMs: number): number {
  const provisioned = findCondition(ac.status?.conditions, AgentComputerConditions.Provisioned);
  const since = Date.parse(
    (provisioned?.status === 'False' ? provisioned.lastTransitionTime : undefined) ??
      ac.metadata.creationTimestamp ??
      '',
  );
  return (Number.isNaN(since) ? 0 : since) + graceMs;
}

/**
 * Sorts `members` (every AgentComputer labelled for the pool) into a census at `now`; a member
 * failing for longer than `failedGraceMs` counts as failed (to be replaced), a more recent
 * failure as provisioning (it may still recover), reported either way.
 */
export function takeCensus(
  members: readonly AgentComputer[],
  now: Date,
  failedGraceMs: number = FAILED_MEMBER_GRACE_MS,
): PoolCensus {
  const live = members.filter((ac) => ac.metadata.deletionTimestamp === undefined);
  const available = live.filter(isAvailable);
  const claimed = live.filter(isClaimed);
  const since = now.getTime() - DEMAND_WINDOW_MS;
  const recentClaims = claimed
    .map(claimedAt)
    .filter((time): time is number => time !== undefined && time > since)
    .sort((a, b) => a - b);
  const failing = available.filter((ac) => ac.status?.provisionError !== undefined);
  const dueAt = new Map(failing.map((ac) => [ac, replacementDueAt(ac, failedGraceMs)]));
  const failed = failing.filter((ac) => (dueAt.get(ac) ?? 0) <= now.getTime());
  const waiting = [...dueAt.values()].filter((time) => time > now.getTime());
  const starting = available.filter((ac) => !failed.includes(ac));
  const [firstFailing] = failing;
  return {
    ready: starting.filter(readyForCurrentSpec),
    provisioning: starting.filter((ac) => !readyForCurrentSpec(ac)),
    failed,
    nextReplacementAt: waiting.length === 0 ? undefined : Math.min(...waiting),
    claimed: claimed.length,
    recentClaims,
    failure:
      firstFailing === undefined
        ? undefined
        : { member: firstFailing.metadata.name, message: firstFailing.status?.provisionError ?? '' },
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
 * newest ready ones, never a reserved one. Claimed members are not the pool's any more and are
 * never touched.
 */
export function planRefill(census: PoolCensus, desired: number, makeUpTo: number = desired): RefillPlan {
  const failed = [...census.failed];
  const available = census.ready.length + census.provisioning.length;
  if (available <= desired)
    return { create: Math.max(0, Math.min(desired, makeUpTo) - available), remove: failed };
  // A reserved member is its holder's to hand out (or to release): never removed as surplus.
  const removable = (members: readonly AgentComputer[]): AgentComputer[] =>
    members.filter((ac) => !isSpokenFor(ac)).sort(newestFirst);
  const candidates = [...removable(census.provisioning), ...removable(census.ready)];
  return { create: 0, remove: [...failed, ...candidates.slice(0, available - desired)] };
}

/** When the oldest claim leaves the demand window (the desired count may fall then), if any. */
export function demandWindowEnds(census: PoolCensus): number | undefined {
  const [oldest] = census.recentClaims;
  return oldest === undefined ? undefined : oldest + DEMAND_WINDOW_MS;
}

/**
 * How many available members to make up to now: the desired count as if the claims of the last
 * CLAIM_QUIET_MS had not happened yet (neither taken from the pool nor counted as demand).
 */
export function refillTarget(spec: WorkspacePoolSpec, census: PoolCensus, now: Date): number {
  const since = now.getTime() - CLAIM_QUIET_MS;
  const young = census.recentClaims.filter((time) => time > since).length;
  return desiredCount(spec, census.recentClaims.length - young) - young;
}

/** When the youngest claim's replacement is due, if it is not yet at `now`. */
export function deferredRefillDue(census: PoolCensus, now: Date): number | undefined {
  const youngest = census.recentClaims.at(-1);
  if (youngest === undefined) return undefined;
  const due = youngest + CLAIM_QUIET_MS;
  return due > now.getTime() ? due : undefined;
}

/**
 * When a pass that would only count a claim younger than CLAIM_QUIET_MS (no member to make or
 * remove now) may run instead, so that the pool's status write waits out the claim's first second
 * with its refill; undefined when the pass has work now or no claim is that young. A burst of
 * claims still refills: a claim older than the second makes the pass's plan non-empty.
 */
export function claimQuietPassAt(
  spec: WorkspacePoolSpec,
  census: PoolCensus,
  desired: number,
  now: Date,
): number | undefined {
  const due = deferredRefillDue(census, now);
  if (due === undefined) return undefined;
  const plan = planRefill(census, desired, refillTarget(spec, census, now));
  return plan.create === 0 && plan.remove.length === 0 ? due : undefined;
}
