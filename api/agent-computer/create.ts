import { randomUUID } from 'node:crypto';
import { AgentComputerSpecSchema, AgentComputerType, apiVersionOf } from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec } from '../../crds/index.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';

/**
 * What `limits.agentComputers` counts: every agent computer not being deleted, except ephemeral
 * ones (made for a task) while they are hibernated — those cost only their disk.
 */
export const countsAgainstLimit = (ac: AgentComputer): boolean =>
  ac.metadata.deletionTimestamp === undefined &&
  !(ac.spec.ephemeral && ac.spec.operatingMode === 'Hibernated');

/**
 * Creates an AgentComputer for the caller, within the organization's `limits.agentComputers`
 * (counted from the cache: see countsAgainstLimit): POST /agent-computers, and POST /tasks without a
 * workspaceId. `limitHint` is added to the limit_exceeded message.
 */
export async function createAgentComputer(
  deps: { store: ResourceStore; readModel: ReadModel },
  principal: Principal,
  spec: Pick<Partial<AgentComputerSpec>, 'displayName' | 'icon' | 'ephemeral'>,
  limitHint?: string,
): Promise<AgentComputer> {
  const limit = principal.organization.spec.limits.agentComputers;
  const live = deps.readModel.agentComputers.list(principal.namespace).filter(countsAgainstLimit).length;
  if (live >= limit) {
    const message = `The organization may have at most ${limit} agent computers`;
    throw new ApiError('limit_exceeded', limitHint === undefined ? message : `${message}${limitHint}`);
  }
  const created = await deps.store.create(AgentComputerType, {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: {
      name: randomUUID(),
      namespace: principal.namespace,
      labels: { 'agentry.dev/owner': principal.keyId },
    },
    spec: AgentComputerSpecSchema.parse({ ...spec, owner: principal.user }),
  });
  deps.readModel.agentComputers.observe(created);
  return created;
}
