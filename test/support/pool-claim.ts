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
import type { ResourceStore } from '../../platform/store/types.js';

/** Writes the claim onto `member` (as read): state `claimed`, claimed-at, no pool owner, the claimer's fields. */
export async function claimMember(
  store: ResourceStore,
  member: AgentComputer,
  claimer: { displayName?: string; owner?: string; ephemeral?: boolean; at?: Date } = {},
): Promise<AgentComputer> {
  const { metadata, spec } = member;
  const idleTimeout = metadata.annotations?.[POOL_IDLE_TIMEOUT_ANNOTATION] ?? spec.idleTimeout;
  return store.replace(AgentComputerType, {
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
  });
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
