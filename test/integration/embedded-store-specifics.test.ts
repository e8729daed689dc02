// The embedded store's own rules beyond the shared contract: watch resumption and delivery,
// validation messages, and the scope of garbage collection.
import { describe, expect, it } from '@jest/globals';
import { SecretType, NamespaceType } from '../../crds/core.js';
import type { Namespace } from '../../crds/core.js';
import type { KubeObject } from '../../crds/resource.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import type { WatchEvent } from '../../platform/store/types.js';
import { ProbeType } from '../contracts/store/contract.js';
import type { Probe } from '../contracts/store/contract.js';
import { failure, ownerRef } from '../contracts/store/context.js';
import { NS, openStoreForEachTest, probe, secret } from './embedded-store-support.js';

const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('EmbeddedStore on disk', () => {
  const disk = openStoreForEachTest();

  describe('watch specifics', () => {
    const collect =
      <T extends KubeObject>(events: WatchEvent<T>[]) =>
      (event: WatchEvent<T>) => {
        events.push(event);
      };

    it('fails with Expired when resuming from a version older than the last reopen', async () => {
      const created = await disk.store.create(ProbeType, probe('a'));
      await disk.reopen();
      const watch = await disk.store.watch(
        ProbeType,
        { resourceVersion: created.metadata.resourceVersion ?? '', signal: new AbortController().signal },
        () => undefined,
      );
      await failure(watch.done, 'Expired');
    });

    it('fails with Expired when resuming from a version older than the remembered history', async () => {
      await disk.store.close();
      disk.store = await EmbeddedStore.open(disk.dir, { historyLimit: 3 });
      const first = await disk.store.create(ProbeType, probe('a'));
      for (const name of ['b', 'c', 'd', 'e', 'f']) await disk.store.create(ProbeType, probe(name));
      const watch = await disk.store.watch(
        ProbeType,
        { resourceVersion: first.metadata.resourceVersion ?? '', signal: new AbortController().signal },
        () => undefined,
      );
      await failure(watch.done, 'Expired');
    });

    it('still resumes from a version the bounded history remembers', async () => {
      await disk.store.close();
      disk.store = await EmbeddedStore.open(disk.dir, { historyLimit: 3 });
      for (const name of ['a', 'b', 'c', 'd', 'e']) await disk.store.create(ProbeType, probe(name));
      const recent = await disk.store.create(ProbeType, probe('f'));
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      const options = { resourceVersion: recent.metadata.resourceVersion ?? '', signal: controller.signal };
      const watch = await disk.store.watch(ProbeType, options, collect(events));
      await disk.store.create(ProbeType, probe('g'));
      await nextMacrotask();
      controller.abort();
      await watch.done;
      expect(events).toMatchObject([{ type: 'ADDED', object: { metadata: { name: 'g' } } }]);
      expect(events).toHaveLength(1);
    });

    it('resumes from a version after the last reopen', async () => {
      await disk.reopen();
      const { resourceVersion } = await disk.store.list(ProbeType);
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      const watch = await disk.store.watch(
        ProbeType,
        { resourceVersion, signal: controller.signal },
        collect(events),
      );
      await disk.store.create(ProbeType, probe('a'));
      await nextMacrotask();
      controller.abort();
      await watch.done;
      expect(events.map((e) => e.type)).toEqual(['ADDED']);
    });

    it('fails with Invalid for a malformed resourceVersion', async () => {
      const options = { resourceVersion: 'abc', signal: new AbortController().signal };
      await failure(
        disk.store.watch(ProbeType, options, () => undefined),
        'Invalid',
      );
    });

    it('calls back from a later macrotask, never inside the write call', async () => {
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      await disk.store.watch(ProbeType, { resourceVersion: '0', signal: controller.signal }, collect(events));
      await disk.store.create(ProbeType, probe('a'));
      expect(events).toHaveLength(0);
      await nextMacrotask();
      expect(events).toHaveLength(1);
      controller.abort();
    });

    it('ends the watch, rejecting done with the error, when the callback throws', async () => {
      const watch = await disk.store.watch(
        ProbeType,
        { resourceVersion: '0', signal: new AbortController().signal },
        () => {
          throw new Error('consumer bug');
        },
      );
      await disk.store.create(ProbeType, probe('a'));
      const error = await failure(watch.done, 'Unavailable');
      expect(error.cause).toEqual(new Error('consumer bug'));
    });

    it("hands out event objects as the watcher's own copies: mutating one does not change the store", async () => {
      const events: WatchEvent<Probe>[] = [];
      const controller = new AbortController();
      await disk.store.watch(ProbeType, { resourceVersion: '0', signal: controller.signal }, (event) => {
        if (event.type === 'ADDED') event.object.spec.size = 99;
        events.push(event);
      });
      await disk.store.create(ProbeType, probe('a', 1));
      await nextMacrotask();
      controller.abort();
      expect(events).toHaveLength(1);
      expect((await disk.store.get(ProbeType, NS, 'a'))?.spec.size).toBe(1);
    });
  });

  describe('validation specifics', () => {
    it('reports schema failures as path: message', async () => {
      const spec: unknown = { size: 'large' };
      const error = await failure(disk.store.create(ProbeType, { ...probe('a'), spec } as Probe), 'Invalid');
      expect(error.message).toMatch(/spec\.size: .*number/);
    });

    it('rejects a namespace on a cluster-scoped type', async () => {
      const namespace: Namespace = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'x', namespace: NS },
      };
      await failure(disk.store.create(NamespaceType, namespace), 'Invalid');
      await failure(disk.store.get(NamespaceType, NS, 'x'), 'Invalid');
    });

    it('rejects invalid label keys and values', async () => {
      await failure(disk.store.create(ProbeType, probe('a', 1, { labels: { 'bad key': 'x' } })), 'Invalid');
      await failure(disk.store.create(ProbeType, probe('b', 1, { labels: { ok: 'bad value!' } })), 'Invalid');
    });

    it('rejects a name longer than 253 characters', async () => {
      await failure(disk.store.create(SecretType, secret('a'.repeat(254))), 'Invalid');
    });
  });

  describe('garbage collection scope', () => {
    it('a cluster-scoped owner collects its dependents in every namespace', async () => {
      const owner = await disk.store.create(NamespaceType, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'owner' },
      });
      await disk.store.create(SecretType, secret('x', 'one', { ownerReferences: [ownerRef(owner)] }));
      await disk.store.create(SecretType, secret('y', 'two', { ownerReferences: [ownerRef(owner)] }));
      await disk.store.delete(NamespaceType, undefined, 'owner');
      expect((await disk.store.list(SecretType)).items).toEqual([]);
    });

    it('a namespaced owner only counts in its own namespace: a dependent elsewhere is collected', async () => {
      const owner = await disk.store.create(ProbeType, probe('owner'));
      await disk.store.create(SecretType, secret('same', NS, { ownerReferences: [ownerRef(owner)] }));
      await disk.store.create(
        SecretType,
        secret('elsewhere', 'other', { ownerReferences: [ownerRef(owner)] }),
      );
      expect((await disk.store.list(SecretType)).items.map((s) => s.metadata.name)).toEqual(['same']);
    });

    it('a dependent created after its owner is gone is collected at once', async () => {
      const owner = await disk.store.create(ProbeType, probe('owner'));
      await disk.store.delete(ProbeType, NS, 'owner');
      await disk.store.create(SecretType, secret('late', NS, { ownerReferences: [ownerRef(owner)] }));
      expect(await disk.store.get(SecretType, NS, 'late')).toBeUndefined();
    });
  });
});
