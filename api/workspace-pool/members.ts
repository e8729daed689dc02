import { isDeepStrictEqual } from 'node:util';
import { AgentComputerConditions, PoolMemberStates, isPoolMemberIn, isSpokenFor } from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec } from '../../crds/index.js';
import { isTrue } from '../../crds/conditions.js';
import { poolMembersBucket } from '../read-model.js';
import type { ReadModel } from '../read-model.js';

/**
 * A pool member nobody has claimed yet (docs/adr/0008-warm-pools.md): the REST API never shows it,
 * limits do not count it, and only a claim makes it a workspace of the organization.
 */
export const isAvailableMember = (ac: AgentComputer): boolean =>
  isPoolMemberIn(ac, PoolMemberStates.Available);

/**
 * What a claimer asks of a workspace's make-up; a member must have exactly what is asked. Neither
 * POST /tasks nor POST /agent-computers asks anything today, so any member matches (ADR 0008); a
 * request field that does ask (a runtime, resources) is matched here and nowhere else.
 */
export type WorkspaceNeeds = Partial<Pick<AgentComputerSpec, 'runtime' | 'resources'>>;

/** Whether a member was made as the claimer needs (an unasked field matches anything). */
export const meetsNeeds = (member: AgentComputer, needs: WorkspaceNeeds): boolean =>
  (needs.runtime === undefined || member.spec.runtime === needs.runtime) &&
  (needs.resources === undefined || isDeepStrictEqual(member.spec.resources, needs.resources));

/**
 * Whether a member could serve a claim now: available, its runner answering (Ready), running, not
 * being deleted, and made as needed. One still starting is left for a later claim: its claimer would
 * wait for the boot, which is what a pool is there to avoid.
 */
export const isServing = (ac: AgentComputer, needs: WorkspaceNeeds): boolean =>
  isAvailableMember(ac) &&
  ac.metadata.deletionTimestamp === undefined &&
  ac.spec.operatingMode === 'Running' &&
  isTrue(ac, AgentComputerConditions.Ready) &&
  meetsNeeds(ac, needs);

/**
 * Whether a claim may take this member now: serving, and not spoken for (a claim reserved ahead is
 * its holder's alone: crds/workspace-pool/reservation.ts).
 */
export const isClaimable = (ac: AgentComputer, needs: WorkspaceNeeds): boolean =>
  isServing(ac, needs) && !isSpokenFor(ac);

/** The organization's members a claim may take now, as its cache has them (claim.ts, reservations.ts). */
export function claimableMembers(
  readModel: ReadModel,
  namespace: string,
  needs: WorkspaceNeeds,
): AgentComputer[] {
  const cache = readModel.agentComputers;
  const bucket = poolMembersBucket(namespace);
  return cache.index
    .page([bucket], 0, cache.index.size(bucket))
    .map((name) => cache.get(namespace, name))
    .filter((ac): ac is AgentComputer => ac !== undefined && isClaimable(ac, needs));
}
