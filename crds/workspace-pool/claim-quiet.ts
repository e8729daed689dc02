import type { AgentComputer } from '../agent-computer/types.js';
import { readyForCurrentSpec } from '../agent-computer/readiness.js';
import { POOL_CLAIMED_AT_ANNOTATION, PoolMemberStates, isPoolMemberIn } from './types.js';

/**
 * The first second after a claim belongs to the claimed workspace's first prompt
 * (docs/workspace-pools.md#the-claims-first-second): the operator leaves what the claim does not
 * need at once until it has passed — the pool's replacement member, the pool's status, the member's
 * own status for the claim's generation. A new member's start, or the writes and reconcile passes a
 * claim would set off, share the cores and the API server with that prompt; on the real node's two
 * cores they cost it more than the claim's own write.
 */
export const CLAIM_QUIET_MS = 1_000;

/** When the member was claimed (ms since the epoch), from its claim annotation; undefined when unclaimed or unreadable. */
export function claimedAt(ac: AgentComputer): number | undefined {
  const written = ac.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION];
  const time = written === undefined ? NaN : Date.parse(written);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * When the claimed member's quiet second ends (ms since the epoch), while it lasts and the member
 * needs nothing of the operator meanwhile: claimed, still ready for its spec (the claim changed no
 * workload field), running and not being deleted. Otherwise undefined: the operator acts now.
 */
export function claimQuietEndsAt(ac: AgentComputer, now: number): number | undefined {
  if (!isPoolMemberIn(ac, PoolMemberStates.Claimed)) return undefined;
  if (ac.metadata.deletionTimestamp !== undefined || ac.spec.operatingMode !== 'Running') return undefined;
  if (!readyForCurrentSpec(ac)) return undefined;
  const at = claimedAt(ac);
  if (at === undefined) return undefined;
  const ends = at + CLAIM_QUIET_MS;
  return ends > now ? ends : undefined;
}
