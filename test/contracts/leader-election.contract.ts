// Leader election of controller managers, written once and run against the embedded store
// (integration) and a real kube-apiserver's Leases (cluster).
import { afterEach, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { LeaseType } from '../../crds/core.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import type { LeaderElectionConfig } from '../../operator/controller/leader-election.js';
import { createLogger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ProbeType } from './probe.js';
import type { Probe } from './probe.js';

export interface LeaderElectionFixture {
  store: ResourceStore;
  /** Where the Leases and Probes go (in a cluster it exists). */
  namespace: string;
  cleanup(): Promise<void>;
}

interface Candidate {
  manager: ControllerManager;
  registry: Registry;
  /** Names of the Probes this candidate reconciled. */
  reconciled: string[];
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const FAST = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
/**
 * For tests of who leads, not of handing over: a loaded machine stalling the event loop past FAST's
 * 1 s renew deadline would hand the lease over mid-test (seen in CI: the "follower" had reconciled).
 */
const STEADY = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 200 };

export function describeLeaderElection(
  name: string,
  makeFixture: () => Promise<LeaderElectionFixture>,
): void {
  describe(`${name}: leader election of controller managers`, () => {
    let fixture: LeaderElectionFixture;
    const candidates: Candidate[] = [];
    let leaseCounter = 0;

    afterEach(async () => {
      await Promise.all(candidates.splice(0).map((c) => c.manager.stop()));
      await fixture.cleanup();
    });

    async function setUp(): Promise<{ lease: string }> {
      fixture = await makeFixture();
      leaseCounter += 1;
      return { lease: `leader-${leaseCounter}-${Date.now().toString(36)}` };
    }

    async function candidate(
      lease: string,
      timing: Partial<LeaderElectionConfig> = FAST,
    ): Promise<Candidate> {
      const registry = new Registry();
      const reconciled: string[] = [];
      const manager = new ControllerManager({
        store: fixture.store,
        logger: createLogger({ level: 'silent' }),
        registry,
        gracePeriodMs: 1000,
        leaderElection: { namespace: fixture.namespace, name: lease, ...timing },
      });
      manager.add<Probe>({
        name: 'probes',
        for: ProbeType,
        reconciler: {
          reconcile: (request) => {
            reconciled.push(request.name);
            return Promise.resolve(undefined);
          },
        },
      });
      await manager.start();
      const made = { manager, registry, reconciled };
      candidates.push(made);
      return made;
    }

    const probe = (probeName: string): Probe => ({
      apiVersion: 'agentry.dev/v1alpha1',
      kind: 'Probe',
      metadata: { name: probeName, namespace: fixture.namespace },
      spec: { size: 1 },
    });

    const leaderOf = (all: Candidate[]): Candidate | undefined => all.find((c) => c.manager.isLeader);

    async function leaderGauge(c: Candidate, lease: string): Promise<number | undefined> {
      const metric = await c.registry.getSingleMetric('agentry_leader_status')?.get();
      return metric?.values.find((value) => value.labels.lease === lease)?.value;
    }

    it('lets exactly one of two managers reconcile', async () => {
      const { lease } = await setUp();
      const a = await candidate(lease, STEADY);
      const b = await candidate(lease, STEADY);
      await eventually(() => leaderOf([a, b]) !== undefined);
      const name = `one-${lease}`;
      await fixture.store.create(ProbeType, probe(name));
      await eventually(() => a.reconciled.includes(name) || b.reconciled.includes(name));
      // Give the follower every chance to reconcile too (it would have by now: it has the same cache).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const leader = leaderOf([a, b]);
      const follower = leader === a ? b : a;
      expect(follower.manager.isLeader).toBe(false);
      expect(follower.reconciled).toEqual([]);
      expect(await leaderGauge(follower, lease)).toBe(0);
      expect(leader === undefined ? undefined : await leaderGauge(leader, lease)).toBe(1);
    });

    it('records the leader as the holder of the Lease', async () => {
      const { lease } = await setUp();
      const a = await candidate(lease);
      await eventually(() => a.manager.isLeader);
      const stored = await fixture.store.get(LeaseType, fixture.namespace, lease);
      expect(stored?.spec?.holderIdentity).toBe(a.manager.identity);
      expect(stored?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    });

    it('hands over to the other manager only after the lease expires when the leader dies', async () => {
      const { lease } = await setUp();
      const a = await candidate(lease);
      await eventually(() => a.manager.isLeader);
      const b = await candidate(lease);
      await a.manager.kill();
      const killedAt = performance.now();
      await eventually(() => b.manager.isLeader);
      const tookOverAfter = performance.now() - killedAt;
      // The dead leader renewed at most one retry period (200 ms) before dying; the lease is 1.5 s.
      expect(tookOverAfter).toBeGreaterThanOrEqual(1000);
      const name = `after-crash-${lease}`;
      await fixture.store.create(ProbeType, probe(name));
      await eventually(() => b.reconciled.includes(name));
      expect(a.reconciled).not.toContain(name);
    });

    it('hands over at once, long before the lease would expire, when the leader stops gracefully', async () => {
      const { lease } = await setUp();
      // A 60 s lease: without the release the successor could not lead within the wait below.
      const a = await candidate(lease, STEADY);
      await eventually(() => a.manager.isLeader);
      const b = await candidate(lease, STEADY);
      await a.manager.stop();
      await eventually(() => b.manager.isLeader, 20_000);
      await expect(a.manager.done).resolves.toBe('stopped');
    });

    it('steps down when it cannot renew within the renew deadline', async () => {
      const { lease } = await setUp();
      const a = await candidate(lease);
      await eventually(() => a.manager.isLeader);
      // Another party takes the lease over and keeps renewing it: the leader's renewals now fail.
      let stealing = true;
      const steal = async (): Promise<void> => {
        while (stealing) {
          const current = await fixture.store.get(LeaseType, fixture.namespace, lease);
          if (current !== undefined) {
            const renewTime = new Date().toISOString().replace(/Z$/, '000Z');
            await fixture.store
              .replace(LeaseType, {
                ...current,
                spec: { ...current.spec, holderIdentity: 'intruder', renewTime },
              })
              .catch(() => undefined);
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const stealer = steal();
      try {
        await expect(a.manager.done).resolves.toBe('lost-leadership');
        expect(a.manager.isLeader).toBe(false);
        expect(await leaderGauge(a, lease)).toBe(0);
      } finally {
        stealing = false;
        await stealer;
      }
    });
  });
}
