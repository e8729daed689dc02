import {
  AgentComputerSpecSchema,
  DurationSchema,
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec, OwnerReference } from '../../crds/index.js';
import { OWNER_KEY_LABEL } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';

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

/**
 * The member as a claim writes it (docs/adr/0008-warm-pools.md): state `claimed` with the time of
 * the claim (and the task it is for, when the task is written with it), the pool's owner reference
 * removed (so deleting the pool no longer takes it; other owners kept), the claimer's key as owner
 * label, and the spec fields a cold create would have written from the same request. Everything
 * else — runtime, resources, the workload — stays.
 */
export function claimedMember(
  member: AgentComputer,
  principal: Pick<Principal, 'keyId' | 'user'>,
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
  return {
    ...member,
    metadata: {
      ...member.metadata,
      labels: {
        ...member.metadata.labels,
        [POOL_MEMBER_STATE_LABEL]: PoolMemberStates.Claimed,
        [OWNER_KEY_LABEL]: principal.keyId,
      },
      annotations: {
        ...member.metadata.annotations,
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
