import { isIP } from 'node:net';
import type { EgressRule } from '../crds/egress.js';
import {
  TargetRefusedError,
  TargetUnresolvableError,
  resolveTargetHost,
} from '../platform/outbound-targets.js';
import type { HostLookup, TargetSubject } from '../platform/outbound-targets.js';
import { decide, normalizeHost } from './allow-list.js';
import type { DenialReason } from './metrics.js';

const EGRESS_TARGET: TargetSubject = { noun: 'egress target', plural: 'workspaces' };

/** Where a connection may go: the checked address it will be pinned to. */
export type Destination =
  | { allowed: true; host: string; port: number; address: string; explicitPort: boolean }
  | { allowed: false; host: string; port: number; reason: DenialReason };

export interface DestinationPolicy {
  /** Loopback and private addresses too (tests); metadata never. */
  allowPrivateTargets: boolean;
  /** Tests replace DNS with this. */
  lookup?: HostLookup | undefined;
}

/** `host:port` of a CONNECT line (`[v6]:port` too); undefined when malformed or without a port. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(authority);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host: normalizeHost(host), port };
}

/**
 * Checks `host:port` against the rules, then resolves the name (all its addresses) and refuses it
 * when any is private, loopback, link-local, metadata and the like, unless private targets are
 * allowed (metadata still refused). The connection must go to the returned address: a second
 * lookup could answer differently (DNS rebinding).
 */
export async function checkDestination(
  rules: readonly EgressRule[],
  host: string,
  port: number,
  policy: DestinationPolicy,
): Promise<Destination> {
  // Rules name hosts, never addresses: a literal address matches nothing.
  const decision = isIP(host) === 0 ? decide(rules, host, port) : { allowed: false as const };
  if (!decision.allowed) return { allowed: false, host, port, reason: 'not_allowed' };
  try {
    const { address } = await resolveTargetHost(
      host,
      { allowPrivate: policy.allowPrivateTargets, refuseMetadata: true },
      { subject: EGRESS_TARGET, ...(policy.lookup === undefined ? {} : { lookup: policy.lookup }) },
    );
    return { allowed: true, host, port, address, explicitPort: decision.explicitPort };
  } catch (err) {
    if (err instanceof TargetUnresolvableError) return { allowed: false, host, port, reason: 'unresolvable' };
    if (err instanceof TargetRefusedError) return { allowed: false, host, port, reason: 'private_address' };
    throw err;
  }
}
