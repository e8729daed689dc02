import { AgentComputerSpecSchema } from '../agent-computer/types.js';
import type { AgentComputer, AgentComputerSpec } from '../agent-computer/types.js';
import { DurationSchema, OWNER_KEY_LABEL } from '../meta.js';
import { apiVersionOf } from '../resource.js';
import type { OwnerReference } from '../meta.js';
import { withoutReservation } from './reservation.js';
import {
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  WorkspacePoolType,
} from './types.js';

/** The spec fields a claimer chooses, as POST /agent-computers and POST /tasks give them. */
export type ClaimerSpec = Pick<Partial<AgentComputerSpec>, 'displayName' | 'icon' | 'ephemeral'>;

const isPoolOwner = (ref: OwnerReference): boolean =>
  ref.kind === WorkspacePoolType.kind && ref.apiVersion === apiVersionOf(WorkspacePoolType);

/**
 * The idle timeout the pool's template gave its members (they wait with 0s); a missing or malformed
 * annotation (a member made by hand) gets the schema's default.
 */
function templateIdleTimeout(member: AgentComputer): string | undefined {
  const parsed = DurationSchema.safeParse(member.metadata.annotations?.[POOL_IDLE_TIMEOUT_ANNOTATION]);
  return parsed.success ? parsed.data : undefined;
}

/** Who claims: the API key's id (absent when the operator completes a claim reserved ahead) and the user it names as owner. */
export interface Claimer {
  keyId?: string | undefined;
  user: string;
}

/**
 * The member as a claim writes it (docs/adr/0008-warm-pools.md): state `claimed` with the time of
 * the claim (and the task it is for, when the task is written with it), the pool's owner reference
 * removed (so deleting the pool no longer takes it; other owners kept), the claimer's key as owner
 * label, and the spec fields a cold create would have written from the same request. Everything
 * else — runtime, resources, the workload — stays.
 */
export function claimedMember(
  member: AgentComputer,
  principal: Claimer,
  spec: ClaimerSpec,
  now: Date,
  forTask?: string,
): AgentComputer {
  const chosen = AgentComputerSpecSchema.parse({
    ...spec,
    owner: principal.user,
    idleTimeout: templateIdleTimeout(member),
  });
  const { icon: _memberIcon, ...memberSpec } = member.spec;
  const owners = (member.metadata.ownerReferences ?? []).filter((ref) => !isPoolOwner(ref));
  const unreserved = withoutReservation(member);
  return {
    ...member,
    metadata: {
      ...member.metadata,
      labels: {
        ...member.metadata.labels,
        [POOL_MEMBER_STATE_LABEL]: PoolMemberStates.Claimed,
        ...(principal.keyId === undefined ? {} : { [OWNER_KEY_LABEL]: principal.keyId }),
      },
      annotations: {
        ...unreserved.metadata.annotations,
        [POOL_CLAIMED_AT_ANNOTATION]: now.toISOString(),
        ...(forTask === undefined ? {} : { [POOL_CLAIMED_FOR_TASK_ANNOTATION]: forTask }),
      },
      ownerReferences: owners.length === 0 ? undefined : owners,
    },
    spec: {
      ...memberSpec,
      displayName: chosen.displayName,
      ...(chosen.icon === undefined ? {} : { icon: chosen.icon }),
      owner: chosen.owner,
      ephemeral: chosen.ephemeral,
      idleTimeout: chosen.idleTimeout,
    },
  };
}

/**
 * The member as the claim of `task` writes it when the task was written first (a claim reserved
 * ahead: reservation.ts): the task's owner as claimer, its title as name, ephemeral, claimed at
 * `at`. The REST API shows a handed-out member so, and the operator completes an expired one so.
 */
export const claimedForTask = (
  member: AgentComputer,
  task: { metadata: { name: string }; spec: { owner: string; title: string } },
  at: Date,
): AgentComputer =>
  claimedMember(
    member,
    { user: task.spec.owner },
    { displayName: task.spec.title, ephemeral: true },
    at,
    task.metadata.name,
  );
