// Watching: replay from a resourceVersion, live changes, selectors and abort.
import { describe, expect } from '@jest/globals';
import { SecretType } from '../../../crds/core.js';
import type { ListResult } from '../../../platform/store/types.js';
import { ProbeType } from '../probe.js';
import type { Probe } from '../probe.js';
import { record, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeWatch(ctx: StoreContext): void {
  const { n, runSelector, probe, secret } = ctx;
  describe('watch', () => {
    test("replays, in order, every change after a list's resourceVersion", async () => {
      await ctx.store.create(ProbeType, probe('before'));
      const listed = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      const a = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const a2 = await ctx.store.replace(ProbeType, { ...a, spec: { size: 2 } });
      await ctx.store.delete(ProbeType, ctx.ns, n('before'));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
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
      const writes = Promise.all(names.map((base) => ctx.store.create(ProbeType, probe(base)))).finally(
        () => {
          state.settled = true;
        },
      );
      const lists: ListResult<Probe>[] = [];
      do {
        lists.push(await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() }));
        await new Promise((resolve) => setTimeout(resolve, 2));
      } while (!state.settled);
      await writes;
      for (const listed of lists) {
        const watch = await record(ctx.store, ProbeType, {
          namespace: ctx.ns,
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
      const listed = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      await ctx.store.create(ProbeType, probe('a'));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: listed.resourceVersion,
      });
      await ctx.store.create(ProbeType, probe('b'));
      const events = await watch.take(2);
      await watch.stop();
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', n('a')],
        ['ADDED', n('b')],
      ]);
    });

    test('starting from resourceVersion "0" sends ADDED for every existing object, then live changes', async () => {
      await ctx.store.create(ProbeType, probe('a'));
      await ctx.store.create(ProbeType, probe('b'));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: '0',
      });
      const initial = await watch.take(2);
      await ctx.store.create(ProbeType, probe('c'));
      const events = await watch.take(3);
      await watch.stop();
      expect(initial.map((e) => `${e.type} ${e.object.metadata.name}`).sort()).toEqual([
        `ADDED ${n('a')}`,
        `ADDED ${n('b')}`,
      ]);
      expect(events[2]).toMatchObject({ type: 'ADDED', object: { metadata: { name: n('c') } } });
    });

    test('sends DELETED with the last state of the object under a new resourceVersion', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 7 }));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: created.metadata.resourceVersion ?? '',
      });
      await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      const [deleted] = await watch.take(1);
      await watch.stop();
      expect(deleted?.type).toBe('DELETED');
      expect(deleted?.object.spec).toEqual({ size: 7 });
      expect(deleted?.object.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    });

    test('delivers status writes as MODIFIED', async () => {
      const created = await ctx.store.create(ProbeType, probe('a'));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: created.metadata.resourceVersion ?? '',
      });
      const written = await ctx.store.replaceStatus(ProbeType, { ...created, status: { phase: 'Ready' } });
      const [event] = await watch.take(1);
      await watch.stop();
      expect(event).toEqual({ type: 'MODIFIED', object: written });
    });

    test('sends nothing for a replace that changes nothing', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: created.metadata.resourceVersion ?? '',
      });
      await ctx.store.replace(ProbeType, created);
      await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      const [event] = await watch.take(1);
      await watch.stop();
      expect(event?.object.spec.size).toBe(2);
      expect(watch.events).toHaveLength(1);
    });

    test('with a label selector, an object that starts matching is ADDED and one that stops matching is DELETED', async () => {
      const listed = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector('tier=gold'),
        resourceVersion: listed.resourceVersion,
      });
      const plain = await ctx.store.create(ProbeType, probe('a'));
      const gold = { ...plain.metadata.labels, tier: 'gold' };
      const joined = await ctx.store.replace(ProbeType, {
        ...plain,
        metadata: { ...plain.metadata, labels: gold },
      });
      const silver = { ...plain.metadata.labels, tier: 'silver' };
      await ctx.store.replace(ProbeType, { ...joined, metadata: { ...joined.metadata, labels: silver } });
      const events = await watch.take(2);
      await watch.stop();
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
      expect(events[0]?.object).toEqual(joined);
      expect(events[1]?.object.metadata.name).toBe(n('a'));
    });

    test('sees only its own type: changes to Secrets do not reach a Probe watch', async () => {
      const listed = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      const watch = await record(ctx.store, ProbeType, {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: listed.resourceVersion,
      });
      await ctx.store.create(SecretType, secret('s'));
      await ctx.store.create(ProbeType, probe('p'));
      const events = await watch.take(1);
      await watch.stop();
      expect(events.map((e) => `${e.object.kind} ${e.object.metadata.name}`)).toEqual([`Probe ${n('p')}`]);
      expect(watch.events).toHaveLength(1);
    });

    test('ends when aborted: done resolves and later changes are not delivered', async () => {
      const listed = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      const options = {
        namespace: ctx.ns,
        labelSelector: runSelector(),
        resourceVersion: listed.resourceVersion,
      };
      const aborted = await record(ctx.store, ProbeType, options);
      const witness = await record(ctx.store, ProbeType, options);
      await aborted.stop();
      await ctx.store.create(ProbeType, probe('a'));
      await witness.take(1);
      await witness.stop();
      await expect(aborted.done).resolves.toBeUndefined();
      expect(aborted.events).toEqual([]);
    });
  });
}
