// A claim of a warm pool member as the API server writes it (docs/adr/0008-warm-pools.md): one
// replace over the version read, so the tests of the operator side need not start the API.
import {
  AgentComputerType,
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';

/** The claim written onto `member` as read: state `claimed`, claimed-at, no pool owner, the claimer's fields. */
function claimed(member: AgentComputer, claimer: Claimer): AgentComputer {
  const { metadata, spec } = member;
  const idleTimeout = metadata.annotations?.[POOL_IDLE_TIMEOUT_ANNOTATION] ?? spec.idleTimeout;
  return {
    ...member,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, [POOL_MEMBER_STATE_LABEL]: PoolMemberStates.Claimed },
      annotations: {
        ...metadata.annotations,
        [POOL_CLAIMED_AT_ANNOTATION]: (claimer.at ?? new Date()).toISOString(),
      },
      ownerReferences: (metadata.ownerReferences ?? []).filter((ref) => ref.kind !== WorkspacePoolType.kind),
    },
    spec: {
      ...spec,
      displayName: claimer.displayName ?? 'Claimed workspace',
      owner: claimer.owner ?? 'user-1',
      ephemeral: claimer.ephemeral ?? false,
      idleTimeout,
    },
  };
}

export interface Claimer {
  displayName?: string;
  owner?: string;
  ephemeral?: boolean;
  at?: Date;
}

/**
 * Claims `member` over the version read, as the API server does; when the operator wrote it in
 * between (a status), reads it again and claims it if it is still available.
 */
export async function claimMember(
  store: ResourceStore,
  member: AgentComputer,
  claimer: Claimer = {},
): Promise<AgentComputer> {
  let current = member;
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.replace(AgentComputerType, claimed(current, claimer));
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || attempt === 5) throw err;
      const { namespace, name } = member.metadata;
      const fresh = await store.get(AgentComputerType, namespace, name);
      const state = fresh?.metadata.labels?.[POOL_MEMBER_STATE_LABEL];
      if (fresh === undefined || state !== PoolMemberStates.Available) throw err;
      current = fresh;
    }
  }
}

/** A WorkspacePool object of `spec` (parsed with its defaults). */
export const workspacePoolObject = (
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): WorkspacePool => ({
  apiVersion: apiVersionOf(WorkspacePoolType),
  kind: WorkspacePoolType.kind,
  metadata: { name, namespace },
  spec: WorkspacePoolSpecSchema.parse(spec),
});
