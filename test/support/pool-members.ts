import {
  AgentComputerSpecSchema,
  AgentComputerType,
  DEFAULT_POOL_NAME,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, PoolMemberState, WorkspacePool } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { claimedMember } from '../../crds/index.js';
import { readyStatus } from './ready-status.js';
import type { ClaimerSpec } from '../../crds/index.js';

/**
 * A WorkspacePool in an organization's namespace. `minReady` (default 0: nothing to make) is what a
 * pool controller, where one runs, keeps: at least the members a test adds by hand, or it would
 * delete them as surplus. `spec` gives the rest of the spec (template, maxReady...).
 */
export async function createPool(
  store: ResourceStore,
  namespace: string,
  options: { name?: string; minReady?: number; spec?: Record<string, unknown> } = {},
): Promise<WorkspacePool> {
  return store.create(WorkspacePoolType, {
    apiVersion: apiVersionOf(WorkspacePoolType),
    kind: WorkspacePoolType.kind,
    metadata: { name: options.name ?? DEFAULT_POOL_NAME, namespace },
    spec: WorkspacePoolSpecSchema.parse({ minReady: options.minReady ?? 0, ...options.spec }),
  });
}

/**
 * A member of `pool` as the pool controller makes it (docs/adr/0008-warm-pools.md): the labels,
 * the template's idle timeout in an annotation, `idleTimeout: 0s`, owned by the pool.
 */
export function poolMemberObject(
  pool: WorkspacePool,
  name: string,
  options: { state?: PoolMemberState; idleTimeout?: string; runtime?: 'process' | 'pod' } = {},
): AgentComputer {
  const { namespace } = pool.metadata;
  return {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name,
      namespace,
      labels: {
        [POOL_LABEL]: pool.metadata.name,
        [POOL_MEMBER_STATE_LABEL]: options.state ?? PoolMemberStates.Available,
      },
      annotations: { [POOL_IDLE_TIMEOUT_ANNOTATION]: options.idleTimeout ?? '15m' },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(WorkspacePoolType),
          kind: WorkspacePoolType.kind,
          name: pool.metadata.name,
          uid: pool.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: AgentComputerSpecSchema.parse({
      displayName: 'Pool member',
      idleTimeout: '0s',
      ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
    }),
  };
}

/** Writes the status the operator writes once the member's runner answers (Ready=True for its generation). */
export async function markReady(store: ResourceStore, member: AgentComputer): Promise<AgentComputer> {
  return store.replaceStatus(AgentComputerType, {
    ...member,
    status: readyStatus(member),
  });
}

/** A member of `pool`, created and (unless `ready: false`) Ready. */
export async function addPoolMember(
  store: ResourceStore,
  pool: WorkspacePool,
  name: string,
  options: Parameters<typeof poolMemberObject>[2] & { ready?: boolean } = {},
): Promise<AgentComputer> {
  const created = await store.create(AgentComputerType, poolMemberObject(pool, name, options));
  return options.ready === false ? created : markReady(store, created);
}

/**
 * Claims `member` with the API server's own claim write (api/workspace-pool/claimed-member.ts) over
 * the version read; when the operator wrote it in between (a status), reads it again and claims it
 * if it is still available, as the API's claim moves on after a conflict.
 * `forTask` names the task the claim is written with (crds/workspace-pool/claim-binding.ts).
 */
export async function claimMember(
  store: ResourceStore,
  member: AgentComputer,
  claimer: ClaimerSpec = { displayName: 'Claimed workspace' },
  forTask?: string,
): Promise<AgentComputer> {
  const principal = { keyId: 'key-1', user: 'user-1' };
  let current = member;
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.replace(
        AgentComputerType,
        claimedMember(current, principal, claimer, new Date(), forTask),
      );
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || attempt === 5) throw err;
      const fresh = await store.get(AgentComputerType, member.metadata.namespace, member.metadata.name);
      if (
        fresh === undefined ||
        fresh.metadata.labels?.[POOL_MEMBER_STATE_LABEL] !== PoolMemberStates.Available
      )
        throw err;
      current = fresh;
    }
  }
}
