import { z } from 'zod';
import {
  AgentComputerConditions,
  POOL_CLAIMED_AT_ANNOTATION,
  readyForCurrentSpec,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { isTrue } from '../../crds/conditions.js';
import { listEnvelopeSchema } from '../pagination.js';

export const AgentComputerStatusValueSchema = z.enum(['provisioning', 'ready', 'hibernated', 'error']);
export type AgentComputerStatusValue = z.infer<typeof AgentComputerStatusValueSchema>;

/** The agent computer record of docs/api.md#agent-computers. */
export const AgentComputerRecordSchema = z.object({
  /** A UUID; the name of one made with kubectl (api/ids.ts). */
  id: z.string(),
  name: z.string(),
  status: AgentComputerStatusValueSchema,
  sandboxId: z.string().nullable(),
  icon: z.string().nullable(),
  url: z.string(),
  provisionError: z.string().nullable(),
  /**
   * What was last asked of it (create, POST /start: `running`; POST /stop or idle: `hibernated`);
   * `status` says how far that has come, so a stop answers `ready` + `hibernated` until it sleeps.
   */
  requestedMode: z.enum(['running', 'hibernated']),
  /** Project instructions every executor in this workspace reads (PATCH sets them). */
  agentInstructions: z.string().nullable(),
  /** Names of the executor environment set by PATCH `env`; the values are never shown. */
  envNames: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AgentComputerRecord = z.infer<typeof AgentComputerRecordSchema>;
export const AgentComputerPageSchema = listEnvelopeSchema(AgentComputerRecordSchema);

/**
 * The REST status, derived from intent and conditions (never stored): an error wins, then a
 * hibernation that took effect, then readiness for the current generation. A workspace asked to
 * stop keeps running until the operator stops it, and says so (not `provisioning`).
 */
export function agentComputerStatus(ac: AgentComputer): AgentComputerStatusValue {
  if (ac.status?.provisionError !== undefined) return 'error';
  if (ac.spec.operatingMode === 'Hibernated') return stoppingStatus(ac);
  return readyForCurrentSpec(ac) ? 'ready' : 'provisioning';
}

/** Asked to hibernate: hibernated once it took effect; until then what it was (a stop is no boot). */
function stoppingStatus(ac: AgentComputer): AgentComputerStatusValue {
  if (isTrue(ac, AgentComputerConditions.Hibernated)) return 'hibernated';
  return isTrue(ac, AgentComputerConditions.Ready) ? 'ready' : 'provisioning';
}

/**
 * When the caller's workspace came to be: its creation, or for a warm-pool member its claim (made
 * earlier, it became the caller's then; docs/adr/0008-warm-pools.md). ISO with milliseconds, so
 * times of both kinds order as text.
 */
export function workspaceCreatedAt(ac: AgentComputer): string {
  const time = ac.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION] ?? ac.metadata.creationTimestamp;
  const parsed = time === undefined ? Number.NaN : Date.parse(time);
  return new Date(Number.isNaN(parsed) ? 0 : parsed).toISOString();
}

/** The newest time anything about the object was observed to change (its claim counts too). */
function updatedAt(ac: AgentComputer): string {
  const transitions = (ac.status?.conditions ?? []).map((c) => isoMillis(c.lastTransitionTime));
  return [workspaceCreatedAt(ac), ...transitions].sort().at(-1) ?? workspaceCreatedAt(ac);
}

export function presentAgentComputer(ac: AgentComputer, publicUrl: string): AgentComputerRecord {
  return {
    id: ac.metadata.name,
    name: ac.spec.displayName,
    status: agentComputerStatus(ac),
    sandboxId: ac.status?.sandboxId ?? null,
    icon: ac.spec.icon ?? null,
    url: `${publicUrl}/v1/agent-computers/${ac.metadata.name}`,
    provisionError: ac.status?.provisionError ?? null,
    requestedMode: ac.spec.operatingMode === 'Hibernated' ? 'hibernated' : 'running',
    agentInstructions: ac.spec.agentInstructions ?? null,
    envNames: ac.spec.envNames ?? [],
    createdAt: workspaceCreatedAt(ac),
    updatedAt: updatedAt(ac),
  };
}

/** docs/api.md: timestamps are ISO 8601 UTC with milliseconds. Kubernetes writes seconds. */
export const isoMillis = (time: string): string => new Date(time).toISOString();
