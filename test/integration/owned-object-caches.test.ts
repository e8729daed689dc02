// The caches of owned kinds (Pods, Secrets, PVCs...) hold Agentry's objects only: they used to list
// and watch every object of the kind in the cluster, whoever made it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { MANAGED_BY_AGENTRY_SELECTOR, MANAGED_BY_LABEL, SecretType } from '../../crds/index.js';
import type { Secret } from '../../crds/index.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import type { ControllerDefinition } from '../../operator/controller/types.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { ProbeType } from '../contracts/probe.js';
import type { Probe } from '../contracts/probe.js';
import { until } from '../support/until.js';

const NS = 'agentry-org-acme';

let dir: string;
let store: EmbeddedStore;
let manager: ControllerManager;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-owned-caches-'));
  store = await EmbeddedStore.open(dir);
  manager = new ControllerManager({
    store,
    logger: createLogger({ level: 'silent' }),
    registry: new Registry(),
  });
});

afterEach(async () => {
  await manager.stop();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const secret = (name: string, labels: Record<string, string> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS, labels },
  type: 'Opaque',
});

/** A controller of Probes owning Secrets; `extra` adds its selection or another watch. */
function addProbeController(name: string, extra: Partial<ControllerDefinition<Probe>>): void {
  manager.add({
    name,
    for: ProbeType,
    owns: [SecretType],
    reconciler: { reconcile: () => Promise.resolve(undefined) },
    ...extra,
  });
}

/** Someone else's first: once ours is in the cache, the watch has seen the other one too. */
async function createBoth(): Promise<void> {
  await store.create(SecretType, secret('someone-elses'));
  await store.create(SecretType, secret('ours', { [MANAGED_BY_LABEL]: 'agentry' }));
}

const cachedNames = (): string[] =>
  manager.caches
    .list(SecretType, NS)
    .map((s) => s.metadata.name)
    .sort();

describe('the cache of an owned kind', () => {
  it("holds only Agentry's objects, listed and watched, when its controllers select them", async () => {
    await store.create(SecretType, secret('listed-ours', { [MANAGED_BY_LABEL]: 'agentry' }));
    await store.create(SecretType, secret('listed-foreign'));
    addProbeController('probe', { ownedSelector: MANAGED_BY_AGENTRY_SELECTOR });
    await manager.start();
    await createBoth();
    await until('the watched Secret in the cache', () =>
      Promise.resolve(cachedNames().includes('ours') ? true : undefined),
    );
    expect(cachedNames()).toEqual(['listed-ours', 'ours']);
  });

  it('holds every object when another controller watching the kind asks for all of them', async () => {
    addProbeController('selective', { ownedSelector: MANAGED_BY_AGENTRY_SELECTOR });
    addProbeController('everything', {});
    await manager.start();
    await createBoth();
    await until('both Secrets in the cache', () =>
      Promise.resolve(cachedNames().length === 2 ? true : undefined),
    );
    expect(cachedNames()).toEqual(['ours', 'someone-elses']);
  });
});
