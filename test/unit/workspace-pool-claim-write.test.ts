// What a warm-pool claim writes into the member (docs/adr/0008-warm-pools.md), and which members a
// claim may take.
import { describe, expect, it } from '@jest/globals';
import { claimedMember } from '../../crds/index.js';
import { isClaimable } from '../../api/workspace-pool/members.js';
import {
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_IDLE_TIMEOUT_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
  workloadDigest,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { poolMemberObject } from '../support/pool-members.js';

const pool: WorkspacePool = {
  apiVersion: apiVersionOf(WorkspacePoolType),
  kind: WorkspacePoolType.kind,
  metadata: { name: 'default', namespace: 'agentry-org-acme', uid: 'pool-uid' },
  spec: WorkspacePoolSpecSchema.parse({}),
};
const claimer = { keyId: 'key-1', user: 'ada' };
const now = new Date('2030-01-02T03:04:05.678Z');
const otherOwner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'keeper', uid: 'keeper-uid' };

const member = (change: (ac: AgentComputer) => AgentComputer = (ac) => ac): AgentComputer =>
  change(poolMemberObject(pool, 'm-1', { idleTimeout: '7m', runtime: 'pod' }));

const ready = (ac: AgentComputer): AgentComputer => ({
  ...ac,
  status: {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        lastTransitionTime: '2030-01-01T00:00:00Z',
        reason: 'RunnerReady',
        message: '',
      },
    ],
  },
});

describe('the claim write', () => {
  it('marks the member claimed, at the time of the claim with milliseconds, by the claimer’s key', () => {
    const claimed = claimedMember(member(), claimer, {}, now);
    expect(claimed.metadata.labels).toEqual({
      [POOL_LABEL]: 'default',
      [POOL_MEMBER_STATE_LABEL]: 'claimed',
      'agentry.dev/owner': 'key-1',
    });
    expect(claimed.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION]).toBe('2030-01-02T03:04:05.678Z');
  });

  it('changes no spec field the workload is made from, so the member stays ready through the claim', () => {
    const waiting = member((ac) => ({ ...ac, spec: { ...ac.spec, icon: '🐙' } }));
    const claimed = claimedMember(waiting, claimer, { displayName: 'Mine', ephemeral: true }, now);
    expect(workloadDigest(claimed.spec)).toBe(workloadDigest(waiting.spec));
  });

  it("removes the pool's owner reference and keeps every other owner", () => {
    const owned = member((ac) => ({
      ...ac,
      metadata: { ...ac.metadata, ownerReferences: [...(ac.metadata.ownerReferences ?? []), otherOwner] },
    }));
    expect(claimedMember(owned, claimer, {}, now).metadata.ownerReferences).toEqual([otherOwner]);
  });

  it("writes the claimer's name, icon, owner and ephemeral flag, and keeps runtime and resources", () => {
    const claimed = claimedMember(member(), claimer, { displayName: 'Box', icon: '🛠', ephemeral: true }, now);
    expect(claimed.spec).toMatchObject({
      displayName: 'Box',
      icon: '🛠',
      owner: 'ada',
      ephemeral: true,
      runtime: 'pod',
    });
  });

  it('gives a claim without a name the default name, as a cold create does', () => {
    expect(claimedMember(member(), claimer, {}, now).spec).toMatchObject({
      displayName: 'Agent Computer',
      ephemeral: false,
    });
  });

  it("sets the idle timeout from the pool template's annotation", () => {
    expect(claimedMember(member(), claimer, {}, now).spec.idleTimeout).toBe('7m');
  });

  it('falls back to the default idle timeout when the annotation is missing or malformed', () => {
    for (const value of [undefined, 'soon']) {
      const annotations: Record<string, string> =
        value === undefined ? {} : { [POOL_IDLE_TIMEOUT_ANNOTATION]: value };
      const handMade = member((ac) => ({ ...ac, metadata: { ...ac.metadata, annotations } }));
      expect(claimedMember(handMade, claimer, {}, now).spec.idleTimeout).toBe('15m');
    }
  });
});

describe('which members a claim may take', () => {
  it('takes an available, Ready, running member', () => {
    expect(isClaimable(ready(member()), {})).toBe(true);
  });

  it.each([
    ['not Ready', member()],
    [
      'being deleted',
      ready(
        member((ac) => ({ ...ac, metadata: { ...ac.metadata, deletionTimestamp: '2030-01-01T00:00:00Z' } })),
      ),
    ],
    ['hibernated', ready(member((ac) => ({ ...ac, spec: { ...ac.spec, operatingMode: 'Hibernated' } })))],
    ['already claimed', ready(claimedMember(member(), claimer, {}, now))],
  ])('leaves a member that is %s', (_what, ac) => {
    expect(isClaimable(ac, {})).toBe(false);
  });

  it('matches a runtime the claimer asks for, and only that one', () => {
    expect(isClaimable(ready(member()), { runtime: 'pod' })).toBe(true);
    expect(isClaimable(ready(member()), { runtime: 'process' })).toBe(false);
  });
});
