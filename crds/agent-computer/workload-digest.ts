import { createHash } from 'node:crypto';
import type { AgentComputerSpec } from './types.js';

/**
 * Spec fields no runtime makes the workload from. Each is read where it is used, when it is used:
 * the API (displayName, icon, owner, previews), the operator's idle and purge passes (idleTimeout,
 * ephemeral), every dispatch (agentInstructions, envNames) and the egress proxy at each request
 * (egress). Changing only these leaves the running workload exactly as it was. Every other field,
 * and any field added later, counts as workload until it is listed here.
 */
export const NON_WORKLOAD_SPEC_FIELDS = [
  'displayName',
  'icon',
  'owner',
  'idleTimeout',
  'ephemeral',
  'previews',
  'agentInstructions',
  'envNames',
  'egress',
] as const satisfies readonly (keyof AgentComputerSpec)[];

const nonWorkload: ReadonlySet<string> = new Set(NON_WORKLOAD_SPEC_FIELDS);

/** JSON with every object's keys in order, so that equal values always serialize alike. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A digest of the spec fields the workload is made from (all but NON_WORKLOAD_SPEC_FIELDS): two
 * specs with the same digest ask the runtime for the same workload.
 */
export function workloadDigest(spec: AgentComputerSpec): string {
  const workload = Object.fromEntries(Object.entries(spec).filter(([key]) => !nonWorkload.has(key)));
  return createHash('sha256').update(canonicalJson(workload)).digest('base64url');
}
