// Warm pools in the embedded default: the real operator over the embedded store, members as real
// runner processes (process runtime). Claims are written as the API server writes them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AgentComputerType,
  CLAIM_QUIET_MS,
  DEFAULT_POOL_NAME,
  EventType,
  OrganizationSpecSchema,
  OrganizationType,
  POOL_LABEL,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { findCondition, isTrueForGeneration } from '../../crds/conditions.js';
import type { RunningOperator } from '../../operator/operator.js';
import type { ProcessRuntime } from '../../operator/runtimes/process.js';
import type { Registry } from 'prom-client';
import { readRunnerRecord, workspacePaths } from '../../operator/runtimes/process/workspace.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { claimMember, createPool as storePool } from '../support/pool-members.js';
import { startProcessOperator, stopAfterPools } from '../support/process-operator.js';
import { until } from '../support/until.js';

const READY_MS = 90_000;
/** Members of pools with this template never start here (the operator runs only `process`): cheap. */
const NEVER_STARTS = { runtime: 'pod' } as const;

let dir: string;
let store: EmbeddedStore;
let registry: Registry;
let runtime: ProcessRuntime;
let operator: RunningOperator;
let namespaces = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-pools-'));
  store = await EmbeddedStore.open(join(dir, 'store'));
  ({ operator, runtime, registry } = await startProcessOperator(store, dir, {
    // A member that cannot start is replaced at once here (clusters wait 5 minutes: it may recover).
    failedPoolMemberGraceMs: 0,
    defaultWorkspacePool: {
      minReady: 1,
      refillPerMinute: 600,
      template: { ...NEVER_STARTS, idleTimeout: '15m' },
    },
  }));
}, 60_000);

afterAll(async () => {
  await store.delete(OrganizationType, undefined, 'globex').catch(() => undefined);
  await stopAfterPools(store, { operator, runtime }, dir);
}, 90_000);

/** A namespace of its own per test: pools and members of one test never meet another's. */
const freshNamespace = (): string => `agentry-org-pools-${String(++namespaces)}`;

const createPool = (
  namespace: string,
  spec: Record<string, unknown>,
  name = 'warm',
): Promise<WorkspacePool> => storePool(store, namespace, { name, spec });

const membersOf = async (namespace: string, pool = 'warm'): Promise<AgentComputer[]> =>
  (await store.list(AgentComputerType, { namespace, labelSelector: `${POOL_LABEL}=${pool}` })).items;

const state = (ac: AgentComputer): string | undefined => ac.metadata.labels?.['agentry.dev/pool-member'];
const available = async (namespace: string, pool = 'warm'): Promise<AgentComputer[]> =>
  (await membersOf(namespace, pool)).filter(
    (ac) => state(ac) === 'available' && ac.metadata.deletionTimestamp === undefined,
  );
const isReady = (ac: AgentComputer): boolean => isTrueForGeneration(ac, 'Ready');

/** Waits until the pool's status matches `expected` (and was written for its generation). */
async function poolStatusIs(
  namespace: string,
  expected: Partial<Record<'desired' | 'ready' | 'provisioning' | 'claimed', number>>,
  name = 'warm',
): Promise<WorkspacePool> {
  return until(
    `pool ${name} status ${JSON.stringify(expected)}`,
    async () => {
      const pool = await store.get(WorkspacePoolType, namespace, name);
      const status = pool?.status;
      if (status === undefined || status.observedGeneration !== pool?.metadata.generation) return undefined;
      const matches = Object.entries(expected).every(
        ([field, value]) => status[field as keyof typeof expected] === value,
      );
      return matches ? pool : undefined;
    },
    READY_MS,
  );
}

async function readyMembers(namespace: string, count: number, pool = 'warm'): Promise<AgentComputer[]> {
  await poolStatusIs(namespace, { ready: count, provisioning: 0 }, pool);
  return (await available(namespace, pool)).filter(isReady);
}

/** A pool of one member with `template`, once that member is ready. */
async function oneReadyMember(namespace: string, template: Record<string, unknown>): Promise<AgentComputer> {
  await createPool(namespace, { minReady: 1, template });
  const [member] = await readyMembers(namespace, 1);
  if (member === undefined) throw new Error('no ready member');
  return member;
}

/** A pool of `count` ready members, one of them claimed, refilled: resolves the claimed member as written. */
async function refilledAfterClaim(namespace: string, count: number): Promise<AgentComputer> {
  await createPool(namespace, { minReady: count });
  const [member] = await readyMembers(namespace, count);
  if (member === undefined) throw new Error('no ready member');
  const claimed = await claimMember(store, member);
  // Nothing requeues a filled pool: only the claim's watch event can start the refill.
  await poolStatusIs(namespace, { ready: count, provisioning: 0, claimed: 1 });
  return claimed;
}

/** The claimed member once the operator has reconciled the claim (its generation observed). */
const reconciledClaim = (namespace: string, claimed: AgentComputer): Promise<AgentComputer> =>
  until(
    'the claim reconciled',
    async () => {
      const ac = await store.get(AgentComputerType, namespace, claimed.metadata.name);
      const seen = ac?.status?.observedGeneration ?? 0;
      return ac !== undefined && seen >= (claimed.metadata.generation ?? 0) ? ac : undefined;
    },
    READY_MS,
  );

describe('a warm pool', () => {
  it('fills to minReady with Ready members, and says so in its status and metrics', async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 2 });
    const pool = await poolStatusIs(namespace, { desired: 2, ready: 2, provisioning: 0, claimed: 0 });
    expect(findCondition(pool.status?.conditions, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Filled',
    });
    const members = await available(namespace);
    expect(members).toHaveLength(2);
    expect(members.every(isReady)).toBe(true);
    expect(members.every((ac) => ac.spec.idleTimeout === '0s')).toBe(true);
    const gauge = await registry.getSingleMetricAsString('agentry_workspace_pool_members');
    expect(gauge).toContain(`agentry_workspace_pool_members{pool="${namespace}/warm",state="ready"} 2`);
  }, 120_000);

  it('refills after a claim, and counts the claimed member', async () => {
    const namespace = freshNamespace();
    const claimed = await refilledAfterClaim(namespace, 1);
    const members = await membersOf(namespace);
    expect(members.map(state).sort()).toEqual(['available', 'claimed']);
    const stored = members.find((ac) => state(ac) === 'claimed');
    expect(stored?.metadata.name).toBe(claimed.metadata.name);
    expect(stored?.metadata.ownerReferences ?? []).toEqual([]);
  }, 120_000);

  it("leaves the claim's first second to its first prompt: the pool's and the member's status are written after it", async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 1 });
    const [member] = await readyMembers(namespace, 1);
    if (member === undefined) throw new Error('no ready member');
    const firstWrites = { pool: Number.NaN, member: Number.NaN };
    const watching = new AbortController();
    const { resourceVersion } = await store.list(AgentComputerType, { namespace });
    const from = { namespace, resourceVersion, signal: watching.signal };
    const watches = await Promise.all([
      store.watch(WorkspacePoolType, from, (event) => {
        if (event.type !== 'BOOKMARK' && event.object.status?.claimed === 1 && Number.isNaN(firstWrites.pool))
          firstWrites.pool = Date.now();
      }),
      store.watch(AgentComputerType, from, (event) => {
        const seen = event.type === 'BOOKMARK' ? 0 : (event.object.status?.observedGeneration ?? 0);
        if (seen > (member.metadata.generation ?? 0) && Number.isNaN(firstWrites.member))
          firstWrites.member = Date.now();
      }),
    ]);
    try {
      const claimed = await claimMember(store, member);
      const claimedAt = Date.parse(claimed.metadata.annotations?.['agentry.dev/claimed-at'] ?? '');
      await until('both status writes', () =>
        Promise.resolve(Number.isNaN(firstWrites.pool + firstWrites.member) ? undefined : true),
      );
      // A timer may fire a millisecond early; a write during the second would come ~1000 ms early.
      expect(firstWrites.pool - claimedAt).toBeGreaterThanOrEqual(CLAIM_QUIET_MS - 5);
      expect(firstWrites.member - claimedAt).toBeGreaterThanOrEqual(CLAIM_QUIET_MS - 5);
    } finally {
      watching.abort();
      await Promise.all(watches.map((watch) => watch.done));
    }
  }, 120_000);

  it("keeps a claimed member's runner process running and Ready through the claim", async () => {
    const namespace = freshNamespace();
    const member = await oneReadyMember(namespace, { idleTimeout: '30m' });
    const recordPath = workspacePaths(dir, namespace, member.metadata.name).record;
    const before = await readRunnerRecord(recordPath);
    const readySince = findCondition(member.status?.conditions, 'Ready')?.lastTransitionTime;
    const claimed = await claimMember(store, member, { displayName: 'mine' });
    expect(claimed.metadata.generation).toBeGreaterThan(member.metadata.generation ?? 0);
    const converged = await reconciledClaim(namespace, claimed);
    expect(isReady(converged)).toBe(true);
    expect(converged.spec).toMatchObject({ displayName: 'mine', idleTimeout: '30m' });
    expect(findCondition(converged.status?.conditions, 'Ready')?.lastTransitionTime).toBe(readySince);
    expect((await readRunnerRecord(recordPath))?.pid).toBe(before?.pid);
    expect(before?.pid).toBeDefined();
  }, 120_000);

  // Regression: the idle clock counted from when the member became ready, so a member that had
  // waited in the pool longer than its idleTimeout hibernated the moment it was claimed.
  it('starts the idle clock of a claimed member at its claim, not when it became ready', async () => {
    const namespace = freshNamespace();
    const member = await oneReadyMember(namespace, { idleTimeout: '10m' });
    // As if it had waited an hour in the pool.
    const waited = await store.replaceStatus(AgentComputerType, {
      ...member,
      status: { ...member.status, lastActivityAt: new Date(Date.now() - 3_600_000).toISOString() },
    });
    const converged = await reconciledClaim(namespace, await claimMember(store, waited));
    expect(converged.spec.operatingMode).toBe('Running');
    expect(isReady(converged)).toBe(true);
  }, 120_000);

  it('deletes surplus available members when minReady is lowered, and never a claimed one', async () => {
    const namespace = freshNamespace();
    const claimed = await refilledAfterClaim(namespace, 3);
    const pool = await store.get(WorkspacePoolType, namespace, 'warm');
    if (pool === undefined) throw new Error('pool gone');
    await store.replace(WorkspacePoolType, { ...pool, spec: { ...pool.spec, minReady: 1 } });
    await poolStatusIs(namespace, { desired: 1, ready: 1, claimed: 1 });
    await until('the surplus members to be gone', async () =>
      (await available(namespace)).length === 1 ? true : undefined,
    );
    expect(await store.get(AgentComputerType, namespace, claimed.metadata.name)).toBeDefined();
  }, 180_000);

  it("never hibernates a member while it is available, whatever the template's idleTimeout", async () => {
    const namespace = freshNamespace();
    const member = await oneReadyMember(namespace, { idleTimeout: '1s' });
    await sleep(3_000); // three idle timeouts of the template
    const later = await store.get(AgentComputerType, namespace, member.metadata.name);
    expect(later?.spec.operatingMode).toBe('Running');
    expect(later !== undefined && isReady(later)).toBe(true);
  }, 120_000);

  it('takes its available members with it when deleted, and leaves the claimed ones', async () => {
    const namespace = freshNamespace();
    const claimed = await refilledAfterClaim(namespace, 2);
    await store.delete(WorkspacePoolType, namespace, 'warm');
    await until(
      'the available members to be gone',
      async () => ((await membersOf(namespace)).length === 1 ? true : undefined),
      READY_MS,
    );
    const left = await store.get(AgentComputerType, namespace, claimed.metadata.name);
    expect(left?.metadata.deletionTimestamp).toBeUndefined();
    expect(left !== undefined && state(left)).toBe('claimed');
  }, 180_000);
});

describe('a warm pool that cannot refill or is misconfigured', () => {
  it('grows by the claims of the last minute, up to maxReady', async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 1, maxReady: 2, template: NEVER_STARTS });
    // Its members fail and are replaced meanwhile: the desired count is what grows.
    await poolStatusIs(namespace, { desired: 1 });
    for (let i = 0; i < 3; i++) {
      // A failed member may be replaced (deleted) between the read and the claim: claim another then.
      await until('a claim', async () => {
        const member = (await available(namespace))[0];
        return member === undefined
          ? undefined
          : claimMember(store, member).then(
              () => true,
              () => undefined,
            );
      });
      await poolStatusIs(namespace, { claimed: i + 1 });
    }
    await poolStatusIs(namespace, { desired: 2, claimed: 3 });
  }, 60_000);

  it('reports RefillFailed with the failing member and its message, and a Warning Event', async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 1, template: NEVER_STARTS });
    const pool = await until(
      'RefillFailed',
      async () => {
        const current = await store.get(WorkspacePoolType, namespace, 'warm');
        const ready = findCondition(current?.status?.conditions, 'Ready');
        return ready?.reason === 'RefillFailed' ? current : undefined;
      },
      30_000,
    );
    const ready = findCondition(pool.status?.conditions, 'Ready');
    expect(ready?.status).toBe('False');
    expect(ready?.message).toMatch(/^member warm-[a-z0-9]{5} cannot start: .*runtime/);
    const event = await until('the RefillFailed event', async () =>
      (await store.list(EventType, { namespace })).items.find((e) => e.reason === 'RefillFailed'),
    );
    expect(event).toMatchObject({ type: 'Warning', involvedObject: { kind: 'WorkspacePool', name: 'warm' } });
  }, 60_000);

  it('replaces a member that cannot start with a new one, and keeps saying RefillFailed', async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 1, refillPerMinute: 60, template: NEVER_STARTS });
    const first = await until('a first member', async () => (await available(namespace))[0]);
    const replacement = await until(
      'a replacement of the failed member',
      async () => (await available(namespace)).find((ac) => ac.metadata.name !== first.metadata.name),
      30_000,
    );
    expect(replacement.metadata.name).not.toBe(first.metadata.name);
    await until('the failed member gone', async () =>
      (await store.get(AgentComputerType, namespace, first.metadata.name)) === undefined ? true : undefined,
    );
    // The pass that replaced it writes the pool's status after the replacement is made.
    const reason = await until('RefillFailed on the pool', async () => {
      const pool = await store.get(WorkspacePoolType, namespace, 'warm');
      const ready = findCondition(pool?.status?.conditions, 'Ready');
      return ready?.reason === 'RefillFailed' ? ready.reason : undefined;
    });
    expect(reason).toBe('RefillFailed');
  }, 60_000);

  it('makes nothing while maxReady is below minReady, and says InvalidSpec', async () => {
    const namespace = freshNamespace();
    await createPool(namespace, { minReady: 2, maxReady: 1 });
    const pool = await until('InvalidSpec', async () => {
      const current = await store.get(WorkspacePoolType, namespace, 'warm');
      return findCondition(current?.status?.conditions, 'Ready')?.reason === 'InvalidSpec'
        ? current
        : undefined;
    });
    expect(pool.status?.desired).toBeUndefined();
    expect(await membersOf(namespace)).toEqual([]);
  }, 30_000);
});

describe("an organization's default pool", () => {
  it("is made from the installation's setting in the organization's namespace, owned by it", async () => {
    const org = await store.create(OrganizationType, {
      apiVersion: apiVersionOf(OrganizationType),
      kind: OrganizationType.kind,
      metadata: { name: 'globex' },
      spec: OrganizationSpecSchema.parse({ displayName: 'Globex' }),
    });
    const pool = await until('the default pool', async () =>
      store.get(WorkspacePoolType, 'agentry-org-globex', DEFAULT_POOL_NAME),
    );
    expect(pool.spec).toMatchObject({ minReady: 1, template: NEVER_STARTS });
    expect(pool.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Organization', uid: org.metadata.uid, controller: true }),
    ]);
    await poolStatusIs('agentry-org-globex', { desired: 1, provisioning: 1 }, DEFAULT_POOL_NAME);
  }, 60_000);
});
