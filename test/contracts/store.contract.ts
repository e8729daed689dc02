/**
 * The resource store conformance suite: what every ResourceStore (embedded, Kubernetes) guarantees,
 * which is what the Kubernetes API guarantees. It uses nothing but the ResourceStore interface, one
 * namespace handed in by the factory, the core Secret type and the `Probe` custom resource below (a
 * cluster harness installs a CRD for ProbeType), so it runs unchanged against a real kube-apiserver.
 *
 * Every object a test creates carries its own names and a `contract-run` label unique to the test, and
 * lists and watches select on that label, so tests do not see each other even in a shared namespace.
 * Waits (watch events, garbage collection) poll with generous timeouts, never fixed sleeps.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SecretType } from '../../crds/core.js';
import { ProbeType } from './probe.js';
import type { Probe, ProbeSpec, ProbeStatus } from './probe.js';
import type { Secret } from '../../crds/core.js';
import type { OwnerReference } from '../../crds/meta.js';
import { apiVersionOf } from '../../crds/resource.js';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import type {
  ListResult,
  ResourceStore,
  StoreErrorReason,
  WatchOptions,
} from '../../platform/store/types.js';
import { StoreError } from '../../platform/store/types.js';

export { ProbeSpecSchema, ProbeStatusSchema, ProbeType } from './probe.js';
export type { Probe, ProbeSpec, ProbeStatus } from './probe.js';
export interface StoreFixture {
  store: ResourceStore;
  /** An existing namespace the suite may create objects in. */
  namespace: string;
  cleanup(): Promise<void>;
}

/** How long to wait for asynchronous effects (watch delivery, a cluster's garbage collector). */
const WAIT_MS = 30_000;
/** Per test and hook: room for one full wait plus a slow cluster's round trips. */
const TEST_TIMEOUT_MS = 2 * WAIT_MS;
const RUN_LABEL = 'contract-run';
const FINALIZER = 'agentry.dev/contract-hold';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

type Change<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

interface Recording<T> {
  readonly events: Change<T>[];
  /** Waits for at least `count` events (BOOKMARKs are skipped) and returns the first `count`. */
  take(count: number): Promise<Change<T>[]>;
  /** Aborts the watch and waits for `done`. */
  stop(): Promise<void>;
  readonly done: Promise<void>;
}

const summary = <T extends KubeObject>(events: readonly Change<T>[]): string =>
  JSON.stringify(
    events.map((e) => `${e.type} ${e.object.metadata.name} @${e.object.metadata.resourceVersion ?? '?'}`),
  );

async function record<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  options: Omit<WatchOptions, 'signal'>,
): Promise<Recording<T>> {
  const controller = new AbortController();
  const events: Change<T>[] = [];
  let ended: unknown;
  const watch = await store.watch(type, { ...options, signal: controller.signal }, (event) => {
    if (event.type !== 'BOOKMARK') events.push({ type: event.type, object: event.object });
  });
  watch.done.then(
    () => (ended = ended ?? new Error('the watch ended')),
    (err: unknown) => (ended = err),
  );
  return {
    events,
    done: watch.done,
    async take(count) {
      await eventually(
        () => `${count} watch events, got ${summary(events)}`,
        () => {
          if (events.length < count && ended !== undefined) {
            throw ended instanceof Error ? ended : new Error(`the watch ended: ${JSON.stringify(ended)}`);
          }
          return events.length >= count;
        },
      );
      return events.slice(0, count);
    },
    async stop() {
      controller.abort();
      await watch.done;
    },
  };
}

async function eventually(
  what: string | (() => string),
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${WAIT_MS} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Awaits a call expected to fail and checks that it failed with a StoreError of `reason`. */
async function failure(call: Promise<unknown>, reason: StoreErrorReason): Promise<StoreError> {
  const outcome = await call.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a StoreError ${reason}, but the call succeeded`);
  if (!(outcome.error instanceof StoreError)) throw outcome.error;
  expect(outcome.error.reason).toBe(reason);
  return outcome.error;
}

const ownerRef = (owner: KubeObject): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid ?? '',
});

export function describeStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`${name} conforms to the resource store contract`, () => {
    let fixture: StoreFixture;
    let store: ResourceStore;
    let ns: string;
    let run: string;

    /** `it` with a timeout that fits the suite's waits (jest's default of 5 s does not). */
    const test = (title: string, body: () => Promise<void>): void => {
      it(title, body, TEST_TIMEOUT_MS);
    };

    const n = (base: string): string => `${base}-${run}`;
    const runSelector = (extra?: string): string => [`${RUN_LABEL}=${run}`, extra].filter(Boolean).join(',');
    const probe = (
      base: string,
      spec: ProbeSpec = { size: 1 },
      metadata: Partial<Probe['metadata']> = {},
      status?: ProbeStatus,
    ): Probe => ({
      apiVersion: apiVersionOf(ProbeType),
      kind: 'Probe',
      metadata: {
        name: n(base),
        namespace: ns,
        ...metadata,
        labels: { [RUN_LABEL]: run, ...metadata.labels },
      },
      spec,
      ...(status === undefined ? {} : { status }),
    });
    const secret = (base: string, metadata: Partial<Secret['metadata']> = {}): Secret => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: n(base),
        namespace: ns,
        ...metadata,
        labels: { [RUN_LABEL]: run, ...metadata.labels },
      },
      type: 'Opaque',
      data: { token: Buffer.from('s3cret').toString('base64') },
    });
    const getProbe = (base: string): Promise<Probe | undefined> => store.get(ProbeType, ns, n(base));
    const getSecret = (base: string): Promise<Secret | undefined> => store.get(SecretType, ns, n(base));
    const gone = (what: string, read: () => Promise<KubeObject | undefined>): Promise<void> =>
      eventually(`${what} to be deleted`, async () => (await read()) === undefined);

    /** Strips this test's finalizers so that a failed test cannot leave objects stuck in a cluster. */
    async function releaseFinalizers<T extends KubeObject>(type: ResourceType<T>): Promise<void> {
      const { items } = await store.list(type, { namespace: ns, labelSelector: runSelector() });
      for (const item of items.filter((i) => (i.metadata.finalizers ?? []).length > 0)) {
        await store
          .replace(type, { ...item, metadata: { ...item.metadata, finalizers: [] } })
          .catch(() => undefined);
      }
    }

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      ns = fixture.namespace;
      run = randomBytes(4).toString('hex');
    }, TEST_TIMEOUT_MS);

    afterEach(async () => {
      await releaseFinalizers(ProbeType).catch(() => undefined);
      await releaseFinalizers(SecretType).catch(() => undefined);
      await fixture.cleanup();
    }, TEST_TIMEOUT_MS);

    describe('create', () => {
      test('returns the stored object with uid, resourceVersion, generation 1 and a creationTimestamp', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 3, note: 'hi' }));
        expect(created.spec).toEqual({ size: 3, note: 'hi' });
        expect(created.metadata.uid).toMatch(/.+/);
        expect(created.metadata.resourceVersion).toMatch(/.+/);
        expect(created.metadata.generation).toBe(1);
        expect(created.metadata.creationTimestamp).toMatch(TIMESTAMP);
        expect(await getProbe('a')).toEqual(created);
      });

      test("ignores the caller's uid, resourceVersion, creationTimestamp and deletionTimestamp", async () => {
        const metadata = {
          uid: '00000000-0000-0000-0000-000000000000',
          resourceVersion: '123456789',
          creationTimestamp: '2000-01-01T00:00:00Z',
          deletionTimestamp: '2000-01-01T00:00:00Z',
        };
        const created = await store.create(ProbeType, probe('a', { size: 1 }, metadata));
        expect(created.metadata.uid).not.toBe(metadata.uid);
        expect(created.metadata.resourceVersion).not.toBe(metadata.resourceVersion);
        expect(created.metadata.creationTimestamp).not.toBe(metadata.creationTimestamp);
        expect(created.metadata.deletionTimestamp).toBeUndefined();
      });

      test('fails with AlreadyExists when the name is taken, leaving the existing object unchanged', async () => {
        const first = await store.create(ProbeType, probe('a', { size: 1 }));
        await failure(store.create(ProbeType, probe('a', { size: 2 })), 'AlreadyExists');
        expect(await getProbe('a')).toEqual(first);
      });

      test('drops the status of a type whose status is a subresource', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }, {}, { phase: 'Ready' }));
        expect(created.status).toBeUndefined();
        expect((await getProbe('a'))?.status).toBeUndefined();
      });

      test("stores a core Secret's type and data as given", async () => {
        const created = await store.create(SecretType, secret('s'));
        expect(created.type).toBe('Opaque');
        expect(created.data).toEqual({ token: Buffer.from('s3cret').toString('base64') });
        expect(await getSecret('s')).toEqual(created);
      });

      test("fails with Invalid and stores nothing when the object does not match the type's schema", async () => {
        const spec: unknown = { size: 'large' }; // a caller bypassing the types: the store must still refuse it
        await failure(store.create(ProbeType, { ...probe('a'), spec } as Probe), 'Invalid');
        expect(await getProbe('a')).toBeUndefined();
      });

      test('fails with Invalid when the name is not a lowercase RFC 1123 subdomain', async () => {
        const invalid = probe('a', { size: 1 }, { name: `Not_Valid-${run}` });
        await failure(store.create(ProbeType, invalid), 'Invalid');
      });

      test('fails with Invalid when a namespaced object has no namespace', async () => {
        const object = probe('a');
        const withoutNamespace = {
          ...object,
          metadata: { name: object.metadata.name, labels: object.metadata.labels },
        };
        await failure(store.create(ProbeType, withoutNamespace), 'Invalid');
      });

      test("fails with Invalid when the object's kind is not the type's", async () => {
        await failure(store.create(ProbeType, { ...probe('a'), kind: 'Other' }), 'Invalid');
        expect(await getProbe('a')).toBeUndefined();
      });
    });

    describe('get and list', () => {
      test('get returns undefined for a missing object', async () => {
        expect(await getProbe('missing')).toBeUndefined();
      });

      test('hands out copies: mutating a returned object does not change the store', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        created.spec.size = 99;
        const read = await getProbe('a');
        if (read === undefined) throw new Error('probe missing');
        read.metadata.labels = {};
        const again = await getProbe('a');
        expect(again?.spec.size).toBe(1);
        expect(again?.metadata.labels).toEqual({ [RUN_LABEL]: run });
      });

      test("lists a namespace's objects sorted by name, with a resourceVersion", async () => {
        for (const base of ['c', 'a', 'b']) await store.create(ProbeType, probe(base));
        const result = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        expect(result.items.map((p) => p.metadata.name)).toEqual([n('a'), n('b'), n('c')]);
        expect(result.resourceVersion).toMatch(/.+/);
      });

      test('lists across all namespaces when no namespace is given', async () => {
        await store.create(ProbeType, probe('a'));
        const result = await store.list(ProbeType, { labelSelector: runSelector() });
        expect(result.items.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`)).toEqual([
          `${ns}/${n('a')}`,
        ]);
      });

      test('filters by equality selectors (=, ==, !=)', async () => {
        await store.create(ProbeType, probe('red', { size: 1 }, { labels: { color: 'red' } }));
        await store.create(ProbeType, probe('blue', { size: 1 }, { labels: { color: 'blue' } }));
        await store.create(ProbeType, probe('plain'));
        const names = async (selector: string): Promise<string[]> =>
          (await store.list(ProbeType, { namespace: ns, labelSelector: runSelector(selector) })).items.map(
            (p) => p.metadata.name,
          );
        expect(await names('color=red')).toEqual([n('red')]);
        expect(await names('color==blue')).toEqual([n('blue')]);
        expect(await names('color!=red')).toEqual([n('blue'), n('plain')]);
      });

      test('filters by set-based selectors (in, notin, exists, !exists)', async () => {
        await store.create(ProbeType, probe('red', { size: 1 }, { labels: { color: 'red' } }));
        await store.create(ProbeType, probe('blue', { size: 1 }, { labels: { color: 'blue' } }));
        await store.create(ProbeType, probe('plain'));
        const names = async (selector: string): Promise<string[]> =>
          (await store.list(ProbeType, { namespace: ns, labelSelector: runSelector(selector) })).items.map(
            (p) => p.metadata.name,
          );
        expect(await names('color in (red, green)')).toEqual([n('red')]);
        expect(await names('color notin (red)')).toEqual([n('blue'), n('plain')]);
        expect(await names('color')).toEqual([n('blue'), n('red')]);
        expect(await names('!color')).toEqual([n('plain')]);
      });

      test('fails with Invalid for a malformed label selector', async () => {
        await failure(store.list(ProbeType, { namespace: ns, labelSelector: 'color in (red' }), 'Invalid');
      });
    });

    describe('replace', () => {
      test('stores the change under a new resourceVersion when given the current one', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const replaced = await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        expect(replaced.spec.size).toBe(2);
        expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
        expect(await getProbe('a')).toEqual(replaced);
      });

      test('fails with Conflict and changes nothing when the resourceVersion is stale', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const current = await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        await failure(store.replace(ProbeType, { ...created, spec: { size: 3 } }), 'Conflict');
        expect(await getProbe('a')).toEqual(current);
      });

      test('fails with Invalid when the object has no resourceVersion', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const metadata = { ...created.metadata, resourceVersion: undefined };
        await failure(store.replace(ProbeType, { ...created, metadata, spec: { size: 2 } }), 'Invalid');
        expect((await getProbe('a'))?.spec.size).toBe(1);
      });

      test('fails with NotFound when the object does not exist', async () => {
        const created = await store.create(ProbeType, probe('a'));
        const other = { ...created, metadata: { ...created.metadata, name: n('missing'), uid: undefined } };
        await failure(store.replace(ProbeType, other), 'NotFound');
      });

      test('fails with Conflict when the uid names another incarnation of the object', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const foreign = {
          ...created,
          metadata: { ...created.metadata, uid: '11111111-1111-1111-1111-111111111111' },
        };
        await failure(store.replace(ProbeType, { ...foreign, spec: { size: 2 } }), 'Conflict');
      });

      test('increments generation when the spec changes', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const replaced = await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        expect(replaced.metadata.generation).toBe(2);
      });

      test('keeps generation when only metadata changes', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const labels = { ...created.metadata.labels, extra: 'yes' };
        const replaced = await store.replace(ProbeType, {
          ...created,
          metadata: { ...created.metadata, labels },
        });
        expect(replaced.metadata.labels).toEqual(labels);
        expect(replaced.metadata.generation).toBe(1);
        expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      });

      test('keeps uid and creationTimestamp whatever the caller sends', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const metadata = { ...created.metadata, uid: undefined, creationTimestamp: '2000-01-01T00:00:00Z' };
        const replaced = await store.replace(ProbeType, { ...created, metadata, spec: { size: 2 } });
        expect(replaced.metadata.uid).toBe(created.metadata.uid);
        expect(replaced.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
      });

      test('ignores status on a type whose status is a subresource, keeping the stored status', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const withStatus = await store.replaceStatus(ProbeType, { ...created, status: { phase: 'Ready' } });
        const replaced = await store.replace(ProbeType, {
          ...withStatus,
          spec: { size: 2 },
          status: { phase: 'Hacked' },
        });
        expect(replaced.spec.size).toBe(2);
        expect(replaced.status).toEqual({ phase: 'Ready' });
      });

      test('keeps the resourceVersion when the replace changes nothing', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const same = await store.replace(ProbeType, created);
        expect(same).toEqual(created);
      });
    });

    describe('replaceStatus', () => {
      test('writes only status: spec and metadata changes are ignored, generation is untouched', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const labels = { ...created.metadata.labels, extra: 'yes' };
        const written = await store.replaceStatus(ProbeType, {
          ...created,
          metadata: { ...created.metadata, labels },
          spec: { size: 50 },
          status: { phase: 'Ready', observed: 1 },
        });
        expect(written.status).toEqual({ phase: 'Ready', observed: 1 });
        expect(written.spec).toEqual({ size: 1 });
        expect(written.metadata.labels).toEqual(created.metadata.labels);
        expect(written.metadata.generation).toBe(1);
        expect(written.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      });

      test('fails with Conflict and changes nothing when the resourceVersion precondition is stale', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const current = await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        const stale = { resourceVersion: created.metadata.resourceVersion ?? '' };
        await failure(
          store.replaceStatus(ProbeType, { ...current, status: { phase: 'Ready' } }, stale),
          'Conflict',
        );
        expect(await getProbe('a')).toEqual(current);
      });

      test('fails with Invalid for a type without a status subresource', async () => {
        const created = await store.create(SecretType, secret('s'));
        await failure(store.replaceStatus(SecretType, created), 'Invalid');
      });

      test('fails with NotFound when the object does not exist', async () => {
        await failure(
          store.replaceStatus(ProbeType, { ...probe('missing'), status: { phase: 'Ready' } }),
          'NotFound',
        );
      });
    });

    describe('delete', () => {
      test('removes an object without finalizers and returns undefined', async () => {
        await store.create(ProbeType, probe('a'));
        expect(await store.delete(ProbeType, ns, n('a'))).toBeUndefined();
        expect(await getProbe('a')).toBeUndefined();
      });

      test('fails with NotFound when the object does not exist', async () => {
        await failure(store.delete(ProbeType, ns, n('missing')), 'NotFound');
      });

      test('fails with Conflict and keeps the object when the resourceVersion precondition is stale', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const current = await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        const stale = { resourceVersion: created.metadata.resourceVersion ?? '' };
        await failure(store.delete(ProbeType, ns, n('a'), stale), 'Conflict');
        expect(await getProbe('a')).toEqual(current);
      });

      test('fails with Conflict and keeps the object when the uid precondition names another incarnation', async () => {
        const first = await store.create(ProbeType, probe('a'));
        await store.delete(ProbeType, ns, n('a'));
        const second = await store.create(ProbeType, probe('a'));
        await failure(store.delete(ProbeType, ns, n('a'), { uid: first.metadata.uid ?? '' }), 'Conflict');
        expect(await getProbe('a')).toEqual(second);
      });

      test('only marks an object with finalizers: deletionTimestamp set, generation bumped, object returned', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
        const marked = await store.delete(ProbeType, ns, n('a'));
        expect(marked?.metadata.deletionTimestamp).toMatch(TIMESTAMP);
        expect(marked?.metadata.finalizers).toEqual([FINALIZER]);
        expect(marked?.metadata.generation).toBe(2);
        expect(marked?.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
        expect(await getProbe('a')).toEqual(marked);
      });

      test('changes nothing when deleting an object already being deleted', async () => {
        await store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
        const marked = await store.delete(ProbeType, ns, n('a'));
        const again = await store.delete(ProbeType, ns, n('a'));
        expect(again).toEqual(marked);
      });

      test('removes an object being deleted once a replace removes its last finalizer', async () => {
        await store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
        const marked = await store.delete(ProbeType, ns, n('a'));
        if (marked === undefined) throw new Error('expected the object to be kept');
        await store.replace(ProbeType, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
        await gone('the probe', () => getProbe('a'));
      });

      test('keeps deletionTimestamp when a replace leaves it out', async () => {
        await store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
        const marked = await store.delete(ProbeType, ns, n('a'));
        if (marked === undefined) throw new Error('expected the object to be kept');
        const metadata = { ...marked.metadata, deletionTimestamp: undefined };
        const replaced = await store.replace(ProbeType, { ...marked, metadata, spec: { size: 2 } });
        expect(replaced.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
      });

      test('fails with Invalid when a replace adds a finalizer to an object being deleted', async () => {
        await store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
        const marked = await store.delete(ProbeType, ns, n('a'));
        if (marked === undefined) throw new Error('expected the object to be kept');
        const finalizers = [FINALIZER, 'agentry.dev/another'];
        await failure(
          store.replace(ProbeType, { ...marked, metadata: { ...marked.metadata, finalizers } }),
          'Invalid',
        );
      });
    });

    describe('garbage collection', () => {
      test('deletes the dependents of a removed owner, of any type, recursively', async () => {
        const owner = await store.create(ProbeType, probe('owner'));
        const child = await store.create(
          ProbeType,
          probe('child', { size: 1 }, { ownerReferences: [ownerRef(owner)] }),
        );
        await store.create(SecretType, secret('grandchild', { ownerReferences: [ownerRef(child)] }));
        await store.delete(ProbeType, ns, n('owner'));
        await gone('the dependent probe', () => getProbe('child'));
        await gone('the dependent secret', () => getSecret('grandchild'));
      });

      test('keeps a dependent while another of its owners exists', async () => {
        const first = await store.create(ProbeType, probe('first'));
        const second = await store.create(ProbeType, probe('second'));
        const shared = [ownerRef(first), ownerRef(second)];
        await store.create(SecretType, secret('shared', { ownerReferences: shared }));
        await store.create(SecretType, secret('canary', { ownerReferences: [ownerRef(first)] }));
        await store.delete(ProbeType, ns, n('first'));
        await gone('the canary dependent of the deleted owner', () => getSecret('canary'));
        expect(await getSecret('shared')).toBeDefined();
      });

      test('marks a dependent with finalizers for deletion and removes it once they are gone', async () => {
        const owner = await store.create(ProbeType, probe('owner'));
        const metadata = { ownerReferences: [ownerRef(owner)], finalizers: [FINALIZER] };
        await store.create(ProbeType, probe('held', { size: 1 }, metadata));
        await store.delete(ProbeType, ns, n('owner'));
        await eventually('the dependent to be marked for deletion', async () => {
          return (await getProbe('held'))?.metadata.deletionTimestamp !== undefined;
        });
        const held = await getProbe('held');
        if (held === undefined) throw new Error('the dependent with a finalizer was removed');
        await store.replace(ProbeType, { ...held, metadata: { ...held.metadata, finalizers: [] } });
        await gone('the dependent', () => getProbe('held'));
      });
    });

    describe('watch', () => {
      test("replays, in order, every change after a list's resourceVersion", async () => {
        await store.create(ProbeType, probe('before'));
        const listed = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        const a = await store.create(ProbeType, probe('a', { size: 1 }));
        const a2 = await store.replace(ProbeType, { ...a, spec: { size: 2 } });
        await store.delete(ProbeType, ns, n('before'));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: listed.resourceVersion,
        });
        const events = await watch.take(3);
        await watch.stop();
        expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
          ['ADDED', n('a')],
          ['MODIFIED', n('a')],
          ['DELETED', n('before')],
        ]);
        expect(events[0]?.object).toEqual(a);
        expect(events[1]?.object).toEqual(a2);
      });

      test("from any list's resourceVersion sees exactly the changes that list missed, also lists taken mid-write", async () => {
        const names = Array.from({ length: 20 }, (_, i) => `w${i}`);
        const state = { settled: false };
        const writes = Promise.all(names.map((base) => store.create(ProbeType, probe(base)))).finally(() => {
          state.settled = true;
        });
        const lists: ListResult<Probe>[] = [];
        do {
          lists.push(await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() }));
          await new Promise((resolve) => setTimeout(resolve, 2));
        } while (!state.settled);
        await writes;
        for (const listed of lists) {
          const watch = await record(store, ProbeType, {
            namespace: ns,
            labelSelector: runSelector(),
            resourceVersion: listed.resourceVersion,
          });
          const events = await watch.take(names.length - listed.items.length);
          await watch.stop();
          const seen = [...listed.items, ...events.map((e) => e.object)].map((p) => p.metadata.name);
          expect(seen.sort()).toEqual(names.map(n).sort());
        }
      });

      test('delivers live changes after the replayed ones', async () => {
        const listed = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        await store.create(ProbeType, probe('a'));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: listed.resourceVersion,
        });
        await store.create(ProbeType, probe('b'));
        const events = await watch.take(2);
        await watch.stop();
        expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
          ['ADDED', n('a')],
          ['ADDED', n('b')],
        ]);
      });

      test('starting from resourceVersion "0" sends ADDED for every existing object, then live changes', async () => {
        await store.create(ProbeType, probe('a'));
        await store.create(ProbeType, probe('b'));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: '0',
        });
        const initial = await watch.take(2);
        await store.create(ProbeType, probe('c'));
        const events = await watch.take(3);
        await watch.stop();
        expect(initial.map((e) => `${e.type} ${e.object.metadata.name}`).sort()).toEqual([
          `ADDED ${n('a')}`,
          `ADDED ${n('b')}`,
        ]);
        expect(events[2]).toMatchObject({ type: 'ADDED', object: { metadata: { name: n('c') } } });
      });

      test('sends DELETED with the last state of the object under a new resourceVersion', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 7 }));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: created.metadata.resourceVersion ?? '',
        });
        await store.delete(ProbeType, ns, n('a'));
        const [deleted] = await watch.take(1);
        await watch.stop();
        expect(deleted?.type).toBe('DELETED');
        expect(deleted?.object.spec).toEqual({ size: 7 });
        expect(deleted?.object.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      });

      test('delivers status writes as MODIFIED', async () => {
        const created = await store.create(ProbeType, probe('a'));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: created.metadata.resourceVersion ?? '',
        });
        const written = await store.replaceStatus(ProbeType, { ...created, status: { phase: 'Ready' } });
        const [event] = await watch.take(1);
        await watch.stop();
        expect(event).toEqual({ type: 'MODIFIED', object: written });
      });

      test('sends nothing for a replace that changes nothing', async () => {
        const created = await store.create(ProbeType, probe('a', { size: 1 }));
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: created.metadata.resourceVersion ?? '',
        });
        await store.replace(ProbeType, created);
        await store.replace(ProbeType, { ...created, spec: { size: 2 } });
        const [event] = await watch.take(1);
        await watch.stop();
        expect(event?.object.spec.size).toBe(2);
        expect(watch.events).toHaveLength(1);
      });

      test('with a label selector, an object that starts matching is ADDED and one that stops matching is DELETED', async () => {
        const listed = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector('tier=gold'),
          resourceVersion: listed.resourceVersion,
        });
        const plain = await store.create(ProbeType, probe('a'));
        const gold = { ...plain.metadata.labels, tier: 'gold' };
        const joined = await store.replace(ProbeType, {
          ...plain,
          metadata: { ...plain.metadata, labels: gold },
        });
        const silver = { ...plain.metadata.labels, tier: 'silver' };
        await store.replace(ProbeType, { ...joined, metadata: { ...joined.metadata, labels: silver } });
        const events = await watch.take(2);
        await watch.stop();
        expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
        expect(events[0]?.object).toEqual(joined);
        expect(events[1]?.object.metadata.name).toBe(n('a'));
      });

      test('sees only its own type: changes to Secrets do not reach a Probe watch', async () => {
        const listed = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        const watch = await record(store, ProbeType, {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: listed.resourceVersion,
        });
        await store.create(SecretType, secret('s'));
        await store.create(ProbeType, probe('p'));
        const events = await watch.take(1);
        await watch.stop();
        expect(events.map((e) => `${e.object.kind} ${e.object.metadata.name}`)).toEqual([`Probe ${n('p')}`]);
        expect(watch.events).toHaveLength(1);
      });

      test('ends when aborted: done resolves and later changes are not delivered', async () => {
        const listed = await store.list(ProbeType, { namespace: ns, labelSelector: runSelector() });
        const options = {
          namespace: ns,
          labelSelector: runSelector(),
          resourceVersion: listed.resourceVersion,
        };
        const aborted = await record(store, ProbeType, options);
        const witness = await record(store, ProbeType, options);
        await aborted.stop();
        await store.create(ProbeType, probe('a'));
        await witness.take(1);
        await witness.stop();
        await expect(aborted.done).resolves.toBeUndefined();
        expect(aborted.events).toEqual([]);
      });
    });
  });
}
