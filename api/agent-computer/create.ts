import { randomUUID } from 'node:crypto';
import { AgentComputerSpecSchema, AgentComputerType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { OWNER_KEY_LABEL } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import type { WorkspacePoolClaims } from '../workspace-pool/claim.js';
import type { ClaimerSpec } from '../workspace-pool/claimed-member.js';
import { isAvailableMember } from '../workspace-pool/members.js';

/**
 * What `limits.agentComputers` counts: every agent computer not being deleted, except ephemeral
 * ones (made for a task) while they are hibernated — those cost only their disk — and warm-pool
 * members nobody has claimed (the installation's, not the organization's choice).
 */
export const countsAgainstLimit = (ac: AgentComputer): boolean =>
  ac.metadata.deletionTimestamp === undefined &&
  !(ac.spec.ephemeral && ac.spec.operatingMode === 'Hibernated') &&
  !isAvailableMember(ac);

export interface CreateAgentComputerDeps {
  store: ResourceStore;
  readModel: ReadModel;
  poolClaims: WorkspacePoolClaims;
}

/**
 * An AgentComputer for the caller, within the organization's `limits.agentComputers` (counted from
 * the cache: see countsAgainstLimit): POST /agent-computers, and POST /tasks without a workspaceId.
 * A ready warm-pool member is claimed when there is one (docs/adr/0008-warm-pools.md), else one is
 * made cold; the caller cannot tell them apart but by speed. `limitHint` is added to the
 * limit_exceeded message.
 */
export async function createAgentComputer(
  deps: CreateAgentComputerDeps,
  principal: Principal,
  spec: ClaimerSpec,
  options: { log: Logger; limitHint?: string },
): Promise<AgentComputer> {
  const limit = principal.organization.spec.limits.agentComputers;
  const live = deps.readModel.agentComputers.list(principal.namespace).filter(countsAgainstLimit).length;
  if (live >= limit) {
    const message = `The organization may have at most ${limit} agent computers`;
    const hint = options.limitHint;
    throw new ApiError('limit_exceeded', hint === undefined ? message : `${message}${hint}`);
  }
  const claimed = await deps.poolClaims.claim(principal, spec, options.log);
  if (claimed !== undefined) return claimed;
  const created = await deps.store.create(AgentComputerType, {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name: randomUUID(),
      namespace: principal.namespace,
      labels: { [OWNER_KEY_LABEL]: principal.keyId },
    },
    spec: AgentComputerSpecSchema.parse({ ...spec, owner: principal.user }),
  });
  deps.readModel.agentComputers.observe(created);
  return created;
}
