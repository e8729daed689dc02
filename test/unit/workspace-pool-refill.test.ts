// What a pool makes: its members' names and shape, and at most refillPerMinute of them a minute.
import { describe, expect, it } from '@jest/globals';
import { WorkspacePoolSpecSchema, dnsLabel } from '../../crds/index.js';
import type { WorkspacePool } from '../../crds/index.js';
import { memberName, poolMember, randomSuffix } from '../../operator/workspace-pool/member.js';
import { RefillBudget } from '../../operator/workspace-pool/refill-budget.js';

const pool = (name: string, fields: Record<string, unknown> = {}): WorkspacePool => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'WorkspacePool',
  metadata: { name, namespace: 'agentry-org-acme', uid: 'pool-uid' },
  spec: WorkspacePoolSpecSchema.parse(fields),
});

describe('member names', () => {
  it('are <pool>-<suffix>, a DNS label of at most 63 characters, even for a long dotted pool name', () => {
    const suffix = randomSuffix();
    expect(memberName('default', suffix)).toBe(`default-${suffix}`);
    const long = memberName(`team.${'x'.repeat(240)}`, suffix);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(dnsLabel.safeParse(long).success).toBe(true);
    expect(dnsLabel.safeParse(memberName(`${'a'.repeat(56)}-b`, suffix)).success).toBe(true);
  });
});

describe('poolMember', () => {
  it('is available, labelled and owned by its pool, never idles, and carries the template', () => {
    const ac = poolMember(
      pool('default', { template: { runtime: 'pod', resources: { cpu: '1' }, idleTimeout: '30m' } }),
      'bxk2p',
    );
    expect(ac.metadata).toMatchObject({
      name: 'default-bxk2p',
      namespace: 'agentry-org-acme',
      labels: {
        'agentry.dev/workspace-pool': 'default',
        'agentry.dev/pool-member': 'available',
        'app.kubernetes.io/managed-by': 'agentry',
      },
      annotations: { 'agentry.dev/pool-idle-timeout': '30m' },
      ownerReferences: [
        {
          kind: 'WorkspacePool',
          name: 'default',
          uid: 'pool-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(ac.spec).toMatchObject({
      displayName: 'Warm workspace',
      runtime: 'pod',
      resources: { cpu: '1' },
      idleTimeout: '0s',
      operatingMode: 'Running',
      ephemeral: false,
    });
  });

  it("leaves runtime out when the template names none (the operator's default)", () => {
    expect(poolMember(pool('default'), 'bxk2p').spec.runtime).toBeUndefined();
  });
});

describe('RefillBudget', () => {
  it('allows refillPerMinute in any 60 s and says when the next one may come', () => {
    const budget = new RefillBudget();
    const t0 = 1_000_000;
    expect(budget.remaining('p', 3, t0)).toBe(3);
    budget.spend('p', t0);
    budget.spend('p', t0 + 10_000);
    budget.spend('p', t0 + 20_000);
    expect(budget.remaining('p', 3, t0 + 30_000)).toBe(0);
    expect(budget.nextAt('p', 3, t0 + 30_000)).toBe(t0 + 60_000);
    expect(budget.remaining('p', 3, t0 + 60_001)).toBe(1);
  });

  it('keeps pools apart, and forgets a deleted one', () => {
    const budget = new RefillBudget();
    budget.spend('a', 0);
    expect(budget.remaining('b', 1, 1)).toBe(1);
    budget.forget('a');
    expect(budget.remaining('a', 1, 1)).toBe(1);
  });
});

describe('the refill budget after a restart', () => {
  it('counts the members made before it saw the pool, so a new leader does not refill twice as fast', () => {
    const now = 1_000_000;
    const budget = new RefillBudget();
    budget.seed('acme/default', [now - 50_000, now - 10_000, now - 120_000]);
    expect(budget.remaining('acme/default', 3, now)).toBe(1);
    expect(budget.nextAt('acme/default', 2, now)).toBe(now - 50_000 + 60_000);
  });

  it('seeds a pool once: later passes do not count the same members again', () => {
    const now = 1_000_000;
    const budget = new RefillBudget();
    budget.seed('acme/default', [now - 10_000]);
    budget.seed('acme/default', [now - 10_000]);
    expect(budget.remaining('acme/default', 3, now)).toBe(2);
  });
});
