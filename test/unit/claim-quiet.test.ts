// The claim's first second (crds/workspace-pool/claim-quiet.ts): while it lasts the operator leaves a
// claimed member's bookkeeping alone, unless the member needs something of it.
import { describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  AgentComputerType,
  CLAIM_QUIET_MS,
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  apiVersionOf,
  claimQuietEndsAt,
} from '../../crds/index.js';
import type { AgentComputer, AgentComputerSpec, PoolMemberState } from '../../crds/index.js';
import { readyStatus } from '../support/ready-status.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');

interface Shape {
  state?: PoolMemberState;
  claimedAgoMs?: number;
  claimedAt?: string;
  spec?: Partial<AgentComputerSpec>;
  deleting?: boolean;
}

/** A member made Ready at generation 1, then claimed (generation 2: the claim wrote spec fields). */
function claimed(shape: Shape = {}): AgentComputer {
  const base: AgentComputer = {
    apiVersion: apiVersionOf(AgentComputerType),
    kind: AgentComputerType.kind,
    metadata: { name: 'm', namespace: 'agentry-org-acme', generation: 1 },
    spec: AgentComputerSpecSchema.parse({ idleTimeout: '0s' }),
  };
  const claimedAt = shape.claimedAt ?? new Date(NOW - (shape.claimedAgoMs ?? 100)).toISOString();
  return {
    ...base,
    metadata: {
      ...base.metadata,
      generation: 2,
      labels: { [POOL_LABEL]: 'warm', [POOL_MEMBER_STATE_LABEL]: shape.state ?? 'claimed' },
      annotations: { [POOL_CLAIMED_AT_ANNOTATION]: claimedAt },
      ...(shape.deleting === true ? { deletionTimestamp: new Date(NOW).toISOString() } : {}),
    },
    spec: { ...base.spec, idleTimeout: '15m', displayName: 'mine', ...shape.spec },
    status: readyStatus(base),
  };
}

describe("a claimed member's first second", () => {
  it('lasts CLAIM_QUIET_MS from the claim', () => {
    expect(claimQuietEndsAt(claimed({ claimedAgoMs: 100 }), NOW)).toBe(NOW - 100 + CLAIM_QUIET_MS);
  });

  it('is over once CLAIM_QUIET_MS have passed', () => {
    expect(claimQuietEndsAt(claimed({ claimedAgoMs: CLAIM_QUIET_MS }), NOW)).toBeUndefined();
  });

  it('is none for a member nobody claimed', () => {
    expect(claimQuietEndsAt(claimed({ state: 'available' }), NOW)).toBeUndefined();
  });

  it('is none when the claimed workspace is being deleted', () => {
    expect(claimQuietEndsAt(claimed({ deleting: true }), NOW)).toBeUndefined();
  });

  it('is none when it is asked to hibernate', () => {
    expect(claimQuietEndsAt(claimed({ spec: { operatingMode: 'Hibernated' } }), NOW)).toBeUndefined();
  });

  it('is none when a workload field changed since Ready (the operator must restart it)', () => {
    expect(claimQuietEndsAt(claimed({ spec: { resources: { cpu: '2' } } }), NOW)).toBeUndefined();
  });

  it('is none when the claim time cannot be read', () => {
    expect(claimQuietEndsAt(claimed({ claimedAt: 'yesterday' }), NOW)).toBeUndefined();
  });
});
