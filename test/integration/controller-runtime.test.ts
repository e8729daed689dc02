// The controller runtime over the real embedded store on disk: informers, work queue, workers,
// back-off, requeueAfter, terminal errors, owned and watched objects, metrics, graceful stop.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { SecretType } from '../../crds/core.js';
import type { Secret } from '../../crds/core.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import { ExponentialBackoffRateLimiter } from '../../operator/controller/rate-limiter.js';
import { TerminalError } from '../../operator/controller/types.js';
import type {
  ControllerDefinition,
  ReconcileRequest,
  ReconcileResult,
} from '../../operator/controller/types.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { StoreError } from '../../platform/store/types.js';
import { ProbeType } from '../contracts/probe.js';
import type { Probe } from '../contracts/probe.js';
import { eventually } from '../support/api-server.js';

const NS = 'ctl';

type Behaviour = (
  request: ReconcileRequest,
  attempt: number,
  signal: AbortSignal,
) => Promise<ReconcileResult | undefined>;

interface Call {
  name: string;
  at: number;
}

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager | undefined;
let registry: Registry;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-controller-'));
  store = await EmbeddedStore.open(dir);
  registry = new Registry();
});

afterEach(async () => {
  await manager?.stop();
  manager = undefined;
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const probe = (name: string, size = 1): Probe => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'Probe',
  metadata: { name, namespace: NS },
  spec: { size },
});

/** Converges a Probe: status.observed = spec.size, read from the cache, written once. */
async function converge(request: ReconcileRequest): Promise<undefined> {
  const current = manager?.caches.get(ProbeType, request.namespace, request.name);
  if (current === undefined || current.status?.observed === current.spec.size) return undefined;
  const written = await store.replaceStatus(ProbeType, {
    ...current,
    status: { phase: 'Ready', observed: current.spec.size },
  });
  manager?.caches.observe(ProbeType, written);
  return undefined;
}

/** Starts a manager with one Probe controller whose reconcile records each call, then behaves as told. */
async function startController(
  behaviour: Behaviour,
  extra: Partial<ControllerDefinition<Probe>> = {},
  gracePeriodMs?: number,
): Promise<Call[]> {
  const calls: Call[] = [];
  const attempts = new Map<string, number>();
  manager = new ControllerManager({
    store,
    logger: createLogger({ level: 'silent' }),
    registry,
    rateLimiter: () => new ExponentialBackoffRateLimiter(5, 1000),
    ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }),
  });
  manager.add<Probe>({
    name: 'probes',
    for: ProbeType,
    reconciler: {
      reconcile: (request, signal) => {
        const attempt = (attempts.get(request.name) ?? 0) + 1;
        attempts.set(request.name, attempt);
        calls.push({ name: request.name, at: performance.now() });
        return behaviour(request, attempt, signal);
      },
    },
    ...extra,
  });
  await manager.start();
  return calls;
}

const callsOf = (calls: Call[], name: string): Call[] => calls.filter((call) => call.name === name);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(name)?.get();
  const sample = metric?.values.find((value) =>
    Object.entries(labels).every(([key, wanted]) => String(value.labels[key]) === wanted),
  );
  return sample?.value;
}

describe('a controller over the embedded store', () => {
  it('reconciles every object, those there before start and those created after, until status converges', async () => {
    for (let i = 0; i < 10; i++) await store.create(ProbeType, probe(`before-${i}`, i));
    await startController(converge);
    for (let i = 0; i < 10; i++) await store.create(ProbeType, probe(`after-${i}`, i));
    await eventually(async () => {
      const { items } = await store.list(ProbeType, { namespace: NS });
      return items.length === 20 && items.every((item) => item.status?.observed === item.spec.size);
    });
  });

  it('reconciles an object again when its spec changes', async () => {
    const created = await store.create(ProbeType, probe('p', 1));
    await startController(converge);
    await eventually(async () => (await store.get(ProbeType, NS, 'p'))?.status?.observed === 1);
    const current = await store.get(ProbeType, NS, 'p');
    await store.replace(ProbeType, { ...created, ...current, spec: { size: 7 } });
    await eventually(async () => (await store.get(ProbeType, NS, 'p'))?.status?.observed === 7);
  });

  it('wakes the owner when an object it controls changes', async () => {
    const owner = await store.create(ProbeType, probe('owner'));
    const calls = await startController(() => Promise.resolve(undefined), { owns: [SecretType] });
    await eventually(() => callsOf(calls, 'owner').length === 1);
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'owned',
        namespace: NS,
        ownerReferences: [
          {
            apiVersion: 'agentry.dev/v1alpha1',
            kind: 'Probe',
            name: 'owner',
            uid: owner.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      data: {},
    };
    await store.create(SecretType, secret);
    await eventually(() => callsOf(calls, 'owner').length === 2);
  });

  it('wakes the objects a watched object maps to', async () => {
    await store.create(ProbeType, probe('target'));
    const calls = await startController(() => Promise.resolve(undefined), {
      watches: [
        {
          type: SecretType,
          map: (secret: Secret) => {
            const target = secret.metadata.labels?.probe;
            return target === undefined ? [] : [{ namespace: secret.metadata.namespace, name: target }];
          },
        },
      ],
    });
    await eventually(() => callsOf(calls, 'target').length === 1);
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'config', namespace: NS, labels: { probe: 'target' } },
    });
    await eventually(() => callsOf(calls, 'target').length === 2);
  });

  it('retries a failing reconcile with doubling back-off until it succeeds', async () => {
    await store.create(ProbeType, probe('flaky', 3));
    const calls = await startController(async (request, attempt) => {
      if (attempt <= 3) throw new Error(`attempt ${attempt} fails`);
      return converge(request);
    });
    await eventually(async () => (await store.get(ProbeType, NS, 'flaky'))?.status?.observed === 3);
    const times = callsOf(calls, 'flaky').map((call) => call.at);
    expect(times.length).toBeGreaterThanOrEqual(4);
    const gaps = times.slice(1, 4).map((at, i) => at - (times[i] ?? 0));
    // Lower bounds only (5, 10, 20 ms back-off; timers may fire a millisecond early).
    expect(gaps[0]).toBeGreaterThanOrEqual(4);
    expect(gaps[1]).toBeGreaterThanOrEqual(9);
    expect(gaps[2]).toBeGreaterThanOrEqual(19);
    expect(await metricValue('agentry_reconcile_errors_total', { controller: 'probes' })).toBe(3);
  });

  it('retries a write over an outdated version quietly: no failure counted', async () => {
    await store.create(ProbeType, probe('stale', 2));
    const calls = await startController(async (request, attempt) => {
      if (attempt <= 2) throw new StoreError('Conflict', 'the object has been modified');
      return converge(request);
    });
    await eventually(async () => (await store.get(ProbeType, NS, 'stale'))?.status?.observed === 2);
    expect(callsOf(calls, 'stale').length).toBeGreaterThanOrEqual(3);
    // Never counted: the counter has no sample for the controller at all.
    expect(await metricValue('agentry_reconcile_errors_total', { controller: 'probes' })).toBeUndefined();
  });

  it('counts a run of conflicts as failed reconciles', async () => {
    await store.create(ProbeType, probe('fought', 2));
    await startController(async (request, attempt) => {
      if (attempt <= 5) throw new StoreError('Conflict', 'the object has been modified');
      return converge(request);
    });
    await eventually(async () => (await store.get(ProbeType, NS, 'fought'))?.status?.observed === 2);
    expect(await metricValue('agentry_reconcile_errors_total', { controller: 'probes' })).toBe(2);
  });

  it('reconciles again after requeueAfterMs although nothing changed', async () => {
    await store.create(ProbeType, probe('timer'));
    const calls = await startController(() => Promise.resolve({ requeueAfterMs: 50 }));
    await eventually(() => callsOf(calls, 'timer').length >= 3);
  });

  it('does not retry a TerminalError until the object changes', async () => {
    const created = await store.create(ProbeType, probe('broken'));
    const calls = await startController(() => Promise.reject(new TerminalError('spec cannot work')));
    await eventually(() => callsOf(calls, 'broken').length === 1);
    // With retries the first back-off (5 ms) would have called it many times by now.
    await sleep(300);
    expect(callsOf(calls, 'broken')).toHaveLength(1);
    await store.replace(ProbeType, { ...created, spec: { size: 2 } });
    await eventually(() => callsOf(calls, 'broken').length === 2);
  });

  it('aborts the signal of a reconcile still running when the grace period of stop ends', async () => {
    await store.create(ProbeType, probe('slow'));
    let aborted = false;
    const calls = await startController(
      (_request, _attempt, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(undefined);
          });
        }),
      {},
      100,
    );
    await eventually(() => calls.length === 1);
    await manager?.stop();
    expect(aborted).toBe(true);
  });

  it('lets a reconcile in flight finish within the grace period without aborting it', async () => {
    await store.create(ProbeType, probe('brief'));
    let finished: { aborted: boolean } | undefined;
    const calls = await startController(async (_request, _attempt, signal) => {
      await sleep(200);
      finished = { aborted: signal.aborted };
      return undefined;
    });
    await eventually(() => calls.length === 1);
    await manager?.stop();
    expect(finished).toEqual({ aborted: false });
  });

  it('exports queue and reconcile metrics labelled by controller and result', async () => {
    await store.create(ProbeType, probe('measured'));
    const calls = await startController(() => Promise.resolve(undefined));
    await eventually(() => calls.length === 1);
    await eventually(async () =>
      (await registry.metrics()).includes(
        'agentry_reconcile_duration_seconds_count{controller="probes",result="success"} 1',
      ),
    );
    const text = await registry.metrics();
    expect(text).toContain('agentry_workqueue_depth{controller="probes"} 0');
    expect(text).toContain('agentry_workqueue_adds_total{controller="probes"} 1');
    expect(text).toContain('# TYPE agentry_reconcile_errors_total counter');
    expect(text).toContain('# TYPE agentry_reconcile_duration_seconds histogram');
  });

  it('gives reconcilers a cache of the objects it watches, kept current by the informer', async () => {
    await store.create(ProbeType, probe('cached', 4));
    await startController(() => Promise.resolve(undefined));
    expect(manager?.caches.get(ProbeType, NS, 'cached')?.spec.size).toBe(4);
    await store.create(ProbeType, probe('later', 5));
    await eventually(() => manager?.caches.list(ProbeType, NS).length === 2);
  });

  it('refuses to read a type no controller watches', async () => {
    await startController(() => Promise.resolve(undefined));
    expect(() => manager?.caches.get(SecretType, NS, 'x')).toThrow(/no cache of Secret/);
  });
});
