// The arithmetic of a warm pool: how members are counted, how many it aims for, what a pass changes.
import { describe, expect, it } from '@jest/globals';
import {
  AgentComputerSpecSchema,
  CLAIM_QUIET_MS,
  WorkspacePoolSpecSchema,
  reservedMember,
} from '../../crds/index.js';
import type { AgentComputer, Condition } from '../../crds/index.js';
import {
  DEMAND_WINDOW_MS,
  demandWindowEnds,
  desiredCount,
  isInvalidSpec,
  planRefill,
  takeCensus,
  FAILED_MEMBER_GRACE_MS,
  claimQuietPassAt,
  deferredRefillDue,
  refillTarget,
} from '../../operator/workspace-pool/census.js';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString();

const ready = (status: Condition['status'], observedGeneration = 1): Condition => ({
  type: 'Ready',
  status,
  observedGeneration,
  lastTransitionTime: '2026-06-01T11:00:00Z',
  reason: 'Test',
  message: '',
});

interface MemberShape {
  name: string;
  state?: 'available' | 'claimed';
  isReady?: boolean;
  created?: string;
  claimedAt?: string;
  deleting?: boolean;
  provisionError?: string;
  generation?: number;
}

const member = (shape: MemberShape): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: {
    name: shape.name,
    namespace: 'agentry-org-acme',
    generation: shape.generation ?? 1,
    creationTimestamp: shape.created ?? ago(600_000),
    labels: {
      'agentry.dev/workspace-pool': 'default',
      'agentry.dev/pool-member': shape.state ?? 'available',
    },
    ...(shape.claimedAt === undefined ? {} : { annotations: { 'agentry.dev/claimed-at': shape.claimedAt } }),
    ...(shape.deleting === true ? { deletionTimestamp: ago(1_000) } : {}),
  },
  spec: AgentComputerSpecSchema.parse({}),
  status: {
    conditions: [ready(shape.isReady === true ? 'True' : 'False')],
    ...(shape.provisionError === undefined ? {} : { provisionError: shape.provisionError }),
  },
});

const names = (members: readonly AgentComputer[]): string[] => members.map((ac) => ac.metadata.name);
const spec = (fields: Record<string, unknown>) => WorkspacePoolSpecSchema.parse(fields);

describe('takeCensus', () => {
  it('counts available members as ready only when Ready is True for their generation', () => {
    const census = takeCensus(
      [
        member({ name: 'a', isReady: true }),
        member({ name: 'b' }),
        member({ name: 'c', isReady: true, generation: 2 }),
      ],
      NOW,
    );
    expect(names(census.ready)).toEqual(['a']);
    expect(names(census.provisioning)).toEqual(['b', 'c']);
  });

  it('leaves members being deleted out of every count', () => {
    const census = takeCensus(
      [
        member({ name: 'a', isReady: true, deleting: true }),
        member({ name: 'b', state: 'claimed', deleting: true }),
      ],
      NOW,
    );
    expect(census).toMatchObject({ ready: [], provisioning: [], claimed: 0 });
  });

  it('counts every claimed member, and as demand only those claimed within the last minute', () => {
    const census = takeCensus(
      [
        member({ name: 'old', state: 'claimed', claimedAt: ago(DEMAND_WINDOW_MS + 1) }),
        member({ name: 'new', state: 'claimed', claimedAt: ago(5_000) }),
        member({ name: 'unreadable', state: 'claimed', claimedAt: 'yesterday' }),
        member({ name: 'newer', state: 'claimed', claimedAt: ago(1_000) }),
      ],
      NOW,
    );
    expect(census.claimed).toBe(4);
    expect(census.recentClaims).toEqual([NOW.getTime() - 5_000, NOW.getTime() - 1_000]);
    expect(demandWindowEnds(census)).toBe(NOW.getTime() - 5_000 + DEMAND_WINDOW_MS);
  });

  it("reports an available member's provisionError, not a claimed one's", () => {
    const census = takeCensus(
      [
        member({ name: 'claimed', state: 'claimed', provisionError: 'theirs now' }),
        member({ name: 'broken', provisionError: 'ErrImagePull: no such image' }),
      ],
      NOW,
    );
    expect(census.failure).toEqual({ member: 'broken', message: 'ErrImagePull: no such image' });
  });
});

describe('desiredCount', () => {
  // [minReady, maxReady, recent claims, desired]
  const cases: [number, number | undefined, number, number][] = [
    [2, undefined, 0, 2],
    [2, undefined, 5, 2], // no maxReady: no growth with demand
    [2, 10, 0, 2],
    [2, 10, 3, 5],
    [2, 10, 50, 10],
    [0, 0, 4, 0],
    [0, 3, 1, 1],
  ];
  it.each(cases)('minReady %i, maxReady %s, %i recent claims → %i', (minReady, maxReady, claims, desired) => {
    expect(desiredCount(spec({ minReady, ...(maxReady === undefined ? {} : { maxReady }) }), claims)).toBe(
      desired,
    );
  });

  it('calls a maxReady below minReady invalid, and an equal one valid', () => {
    expect(isInvalidSpec(spec({ minReady: 3, maxReady: 2 }))).toBe(true);
    expect(isInvalidSpec(spec({ minReady: 3, maxReady: 3 }))).toBe(false);
    expect(isInvalidSpec(spec({ minReady: 3 }))).toBe(false);
  });
});

describe('planRefill', () => {
  it('makes the members missing to the desired count', () => {
    const census = takeCensus([member({ name: 'a', isReady: true }), member({ name: 'b' })], NOW);
    expect(planRefill(census, 5)).toEqual({ create: 3, remove: [] });
  });

  it('does not count claimed members towards the desired count', () => {
    const census = takeCensus(
      [member({ name: 'a', isReady: true }), member({ name: 'c', state: 'claimed' })],
      NOW,
    );
    expect(planRefill(census, 2).create).toBe(1);
  });

  it('removes provisioning members first, newest first, then the newest ready ones, never claimed ones', () => {
    const census = takeCensus(
      [
        member({ name: 'ready-old', isReady: true, created: ago(300_000) }),
        member({ name: 'ready-new', isReady: true, created: ago(100_000) }),
        member({ name: 'starting-old', created: ago(50_000) }),
        member({ name: 'starting-new', created: ago(10_000) }),
        member({ name: 'claimed', state: 'claimed', isReady: true, created: ago(1_000) }),
      ],
      NOW,
    );
    expect(names(planRefill(census, 1).remove)).toEqual(['starting-new', 'starting-old', 'ready-new']);
    expect(planRefill(census, 1).create).toBe(0);
    expect(names(planRefill(census, 0).remove)).toHaveLength(4);
  });

  it("never removes a reserved member as surplus: it is its API process's to hand out or release", () => {
    const reserved = reservedMember(
      member({ name: 'reserved-new', isReady: true, created: ago(10_000) }),
      'api-1',
      'task-1',
      new Date(NOW.getTime() + 60_000),
    );
    const census = takeCensus([member({ name: 'ready-old', isReady: true }), reserved], NOW);
    expect(names(census.ready)).toEqual(['ready-old', 'reserved-new']);
    expect(names(planRefill(census, 1).remove)).toEqual(['ready-old']);
    expect(names(planRefill(census, 0).remove)).toEqual(['ready-old']);
  });

  it('replaces a failed member: removes it and makes another, since it never counts as available', () => {
    const census = takeCensus(
      [member({ name: 'a', isReady: true }), member({ name: 'broken', provisionError: 'ErrImagePull' })],
      NOW,
    );
    expect(names(census.failed)).toEqual(['broken']);
    expect(census.provisioning).toEqual([]);
    const plan = planRefill(census, 2);
    expect(names(plan.remove)).toEqual(['broken']);
    expect(plan.create).toBe(1);
  });

  it('waits out the grace of a member that only just failed: it may recover (a Pod pending a new node)', () => {
    const census = takeCensus(
      [member({ name: 'pending', provisionError: 'Pod cannot be scheduled', created: ago(60_000) })],
      NOW,
    );
    expect(census.failed).toEqual([]);
    expect(names(census.provisioning)).toEqual(['pending']);
    expect(census.failure?.member).toBe('pending');
    expect(census.nextReplacementAt).toBe(NOW.getTime() - 60_000 + FAILED_MEMBER_GRACE_MS);
    expect(planRefill(census, 1)).toEqual({ create: 0, remove: [] });
  });

  it('times the grace from when the member started failing, not from its creation', () => {
    const old = member({ name: 'was-fine', provisionError: 'ImagePullBackOff', created: ago(3_600_000) });
    const failingSince = ago(30_000);
    old.status = {
      ...old.status,
      conditions: [
        {
          type: 'Provisioned',
          status: 'False',
          reason: 'ProvisionFailed',
          lastTransitionTime: failingSince,
          message: '',
        },
      ],
    };
    const census = takeCensus([old], NOW);
    expect(census.failed).toEqual([]);
    expect(census.nextReplacementAt).toBe(Date.parse(failingSince) + FAILED_MEMBER_GRACE_MS);
  });

  it('changes nothing at the desired count', () => {
    const census = takeCensus([member({ name: 'a', isReady: true }), member({ name: 'b' })], NOW);
    expect(planRefill(census, 2)).toEqual({ create: 0, remove: [] });
  });
});

describe('a claim replaced CLAIM_QUIET_MS after it', () => {
  const fixed = spec({ minReady: 3, maxReady: 3 });
  const poolAfterClaimAgo = (ms: number) =>
    takeCensus(
      [
        member({ name: 'a', isReady: true }),
        member({ name: 'b', isReady: true }),
        member({ name: 'c', state: 'claimed', isReady: true, claimedAt: ago(ms) }),
      ],
      NOW,
    );

  it('makes no replacement while the claim is younger, and looks again when it is due', () => {
    const census = poolAfterClaimAgo(100);
    const desired = desiredCount(fixed, census.recentClaims.length);
    expect(planRefill(census, desired, refillTarget(fixed, census, NOW)).create).toBe(0);
    expect(deferredRefillDue(census, NOW)).toBe(NOW.getTime() - 100 + CLAIM_QUIET_MS);
  });

  it('makes the replacement once the claim is that old', () => {
    const census = poolAfterClaimAgo(CLAIM_QUIET_MS + 1);
    const desired = desiredCount(fixed, census.recentClaims.length);
    expect(planRefill(census, desired, refillTarget(fixed, census, NOW)).create).toBe(1);
    expect(deferredRefillDue(census, NOW)).toBeUndefined();
  });

  it('defers the growth a young claim asks for too, then makes both', () => {
    const growing = spec({ minReady: 2, maxReady: 10 });
    const members = (claimedAgo: number) =>
      takeCensus(
        [
          member({ name: 'a', isReady: true }),
          member({ name: 'c', state: 'claimed', isReady: true, claimedAt: ago(claimedAgo) }),
        ],
        NOW,
      );
    const young = members(100);
    const desired = desiredCount(growing, young.recentClaims.length);
    expect(desired).toBe(3);
    expect(planRefill(young, desired, refillTarget(growing, young, NOW)).create).toBe(0);
    const due = members(CLAIM_QUIET_MS + 1);
    expect(planRefill(due, desired, refillTarget(growing, due, NOW)).create).toBe(2);
  });
});

describe("a pass in a claim's first second", () => {
  const fixed = spec({ minReady: 2, maxReady: 2 });
  const passAt = (members: AgentComputer[]): number | undefined => {
    const census = takeCensus(members, NOW);
    return claimQuietPassAt(fixed, census, desiredCount(fixed, census.recentClaims.length), NOW);
  };

  it('waits for the second to end when all it would do is count the young claim', () => {
    const at = passAt([
      member({ name: 'a', isReady: true }),
      member({ name: 'c', state: 'claimed', isReady: true, claimedAt: ago(100) }),
    ]);
    expect(at).toBe(NOW.getTime() - 100 + CLAIM_QUIET_MS);
  });

  it('runs now when an older claim is due for its replacement (a burst still refills)', () => {
    const at = passAt([
      member({ name: 'c', state: 'claimed', isReady: true, claimedAt: ago(CLAIM_QUIET_MS + 1) }),
      member({ name: 'd', state: 'claimed', isReady: true, claimedAt: ago(100) }),
    ]);
    expect(at).toBeUndefined();
  });

  it('runs now when no claim is that young', () => {
    const at = passAt([
      member({ name: 'a', isReady: true }),
      member({ name: 'b', isReady: true }),
      member({ name: 'c', state: 'claimed', isReady: true, claimedAt: ago(CLAIM_QUIET_MS + 1) }),
    ]);
    expect(at).toBeUndefined();
  });
});
