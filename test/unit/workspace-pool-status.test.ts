// A WorkspacePool's status and Ready condition for what a pass saw.
import { describe, expect, it } from '@jest/globals';
import { WorkspacePoolSpecSchema } from '../../crds/index.js';
import type { AgentComputer, WorkspacePool, WorkspacePoolReason } from '../../crds/index.js';
import type { PoolCensus } from '../../operator/workspace-pool/census.js';
import { computePoolStatus, readyCondition } from '../../operator/workspace-pool/status.js';

const NOW = new Date('2026-06-01T12:00:00.000Z');

const pool = (fields: Record<string, unknown> = {}, generation = 3): WorkspacePool => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'WorkspacePool',
  metadata: { name: 'default', namespace: 'agentry-org-acme', generation },
  spec: WorkspacePoolSpecSchema.parse(fields),
});

const some = (count: number): AgentComputer[] =>
  Array.from({ length: count }, (_, i) => ({
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name: `m${String(i)}` },
    spec: { displayName: 'x', operatingMode: 'Running', idleTimeout: '0s', ephemeral: false },
  }));

const census = (ready: number, provisioning: number, failure?: PoolCensus['failure']): PoolCensus => ({
  ready: some(ready),
  provisioning: some(provisioning),
  failed: [],
  nextReplacementAt: undefined,
  claimed: 0,
  recentClaims: [],
  failure,
});

describe('readyCondition', () => {
  // [ready, provisioning, desired, failure, status, reason]
  const cases: [
    number,
    number,
    number | undefined,
    string | undefined,
    'True' | 'False',
    WorkspacePoolReason,
  ][] = [
    [2, 0, 2, undefined, 'True', 'Filled'],
    [0, 0, 0, undefined, 'True', 'Filled'],
    [1, 1, 2, undefined, 'False', 'Refilling'],
    [0, 2, 2, 'ErrImagePull', 'False', 'RefillFailed'],
    [0, 0, undefined, undefined, 'False', 'InvalidSpec'],
  ];
  it.each(cases)(
    '%i ready, %i provisioning, desired %s, failure %s → %s %s',
    (ready, provisioning, desired, failure, status, reason) => {
      const failed = failure === undefined ? undefined : { member: 'default-x', message: failure };
      expect(readyCondition(pool(), { census: census(ready, provisioning, failed), desired })).toMatchObject({
        status,
        reason,
      });
    },
  );

  it("names the failing member and its provisionError in RefillFailed's message", () => {
    const failed = {
      member: 'default-bxk2p',
      message: 'spec.runtime names a runtime this operator does not run',
    };
    expect(readyCondition(pool(), { census: census(0, 1, failed), desired: 1 }).message).toBe(
      'member default-bxk2p cannot start: spec.runtime names a runtime this operator does not run',
    );
  });

  it("says RefillFailed with the store's words when a member cannot be made", () => {
    const condition = readyCondition(pool(), {
      census: census(1, 0),
      desired: 2,
      makeError: 'exceeded quota: agentcomputers',
    });
    expect(condition).toMatchObject({
      status: 'False',
      reason: 'RefillFailed',
      message: 'cannot make members: exceeded quota: agentcomputers',
    });
  });

  it('keeps reporting the last failure while its replacement starts, so the condition does not flap', () => {
    const failing = computePoolStatus(
      pool(),
      { census: census(0, 1, { member: 'default-old', message: 'ErrImagePull' }), desired: 1 },
      NOW,
    );
    const replacing = readyCondition({ ...pool(), status: failing }, { census: census(0, 1), desired: 1 });
    expect(replacing).toMatchObject({
      status: 'False',
      reason: 'RefillFailed',
      message: 'member default-old cannot start: ErrImagePull',
    });
  });

  it('says Filled once a replacement of a failed member is ready', () => {
    const failing = computePoolStatus(
      pool(),
      { census: census(0, 1, { member: 'default-old', message: 'ErrImagePull' }), desired: 1 },
      NOW,
    );
    expect(
      readyCondition({ ...pool(), status: failing }, { census: census(1, 0), desired: 1 }),
    ).toMatchObject({
      status: 'True',
      reason: 'Filled',
    });
  });

  it('says which bounds are wrong in InvalidSpec', () => {
    const invalid = pool({ minReady: 3, maxReady: 1 });
    expect(readyCondition(invalid, { census: census(0, 0), desired: undefined }).message).toMatch(
      /spec.maxReady \(1\) is below spec.minReady \(3\)/,
    );
  });
});

describe('computePoolStatus', () => {
  it('writes the counts, and the condition with the generation it observed', () => {
    const status = computePoolStatus(
      pool({}, 7),
      { census: { ...census(1, 2), claimed: 4 }, desired: 3 },
      NOW,
    );
    expect(status).toMatchObject({
      observedGeneration: 7,
      desired: 3,
      ready: 1,
      provisioning: 2,
      claimed: 4,
    });
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Refilling', observedGeneration: 7 }),
    ]);
  });

  it('keeps lastTransitionTime while Ready does not flip, so an unchanged pass writes nothing', () => {
    const first = computePoolStatus(pool(), { census: census(2, 0), desired: 2 }, NOW);
    const later = computePoolStatus(
      { ...pool(), status: first },
      { census: census(2, 0), desired: 2 },
      new Date(NOW.getTime() + 60_000),
    );
    expect(later).toEqual(first);
  });

  it('leaves desired out while the spec is invalid', () => {
    const status = computePoolStatus(
      pool({ minReady: 2, maxReady: 1 }),
      { census: census(0, 0), desired: undefined },
      NOW,
    );
    expect(status.desired).toBeUndefined();
  });
});
