import { randomUUID } from 'node:crypto';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  apiVersionOf,
  newWorkspaceAnnotations,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { OWNER_KEY_LABEL } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import type { WorkspacePoolClaims } from '../workspace-pool/claim.js';
import type { ClaimerSpec } from '../../crds/index.js';
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
 * Throws limit_exceeded when the organization already has `limits.agentComputers` agent computers
 * (counted from the cache: see countsAgainstLimit); `limitHint` is added to the message.
 */
export function assertAgentComputerSlot(
  deps: Pick<CreateAgentComputerDeps, 'readModel'>,
  principal: Principal,
  limitHint?: string,
): void {
  const limit = principal.organization.spec.limits.agentComputers;
  const live = deps.readModel.agentComputers.list(principal.namespace).filter(countsAgainstLimit).length;
  if (live < limit) return;
  const message = `The organization may have at most ${limit} agent computers`;
  throw new ApiError('limit_exceeded', limitHint === undefined ? message : `${message}${limitHint}`);
}

/**
 * An AgentComputer for the caller, within the organization's `limits.agentComputers`: POST
 * /agent-computers, and POST /tasks without a workspaceId when its claim did not go with the task.
 * A ready warm-pool member is claimed when there is one (docs/adr/0008-warm-pools.md), else one is
 * made cold; the caller cannot tell them apart but by speed.
 */
export async function createAgentComputer(
  deps: CreateAgentComputerDeps,
  principal: Principal,
  spec: ClaimerSpec,
  options: { log: Logger; limitHint?: string },
): Promise<AgentComputer> {
  assertAgentComputerSlot(deps, principal, options.limitHint);
  const claimed = await deps.poolClaims.claim(principal, spec, options.log);
  return claimed ?? createColdAgentComputer(deps, principal, spec);
}

/** A new AgentComputer (no pool), the caller's; the limit is the caller's to check. */
export async function createColdAgentComputer(
  deps: Pick<CreateAgentComputerDeps, 'store' | 'readModel'>,
  principal: Principal,
  spec: ClaimerSpec,
): Promise<AgentComputer> {
  const created = await deps.store.create(AgentComputerType, {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name: randomUUID(),
      namespace: principal.namespace,
      labels: { [OWNER_KEY_LABEL]: principal.keyId },
      annotations: newWorkspaceAnnotations(),
    },
    spec: AgentComputerSpecSchema.parse({ ...spec, owner: principal.user }),
  });
  deps.readModel.agentComputers.observe(created);
  return created;
}
