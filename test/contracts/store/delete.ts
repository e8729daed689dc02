// Deleting objects: preconditions, finalizers and deletionTimestamp.
import { describe, expect } from '@jest/globals';
import { ProbeType } from '../probe.js';
import { FINALIZER, TIMESTAMP, failure, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeDelete(ctx: StoreContext): void {
  const { n, probe, getProbe, gone } = ctx;
  describe('delete', () => {
    test('removes an object without finalizers and returns undefined', async () => {
      await ctx.store.create(ProbeType, probe('a'));
      expect(await ctx.store.delete(ProbeType, ctx.ns, n('a'))).toBeUndefined();
      expect(await getProbe('a')).toBeUndefined();
    });

    test('fails with NotFound when the object does not exist', async () => {
      await failure(ctx.store.delete(ProbeType, ctx.ns, n('missing')), 'NotFound');
    });

    test('fails with Conflict and keeps the object when the resourceVersion precondition is stale', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const current = await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      const stale = { resourceVersion: created.metadata.resourceVersion ?? '' };
      await failure(ctx.store.delete(ProbeType, ctx.ns, n('a'), stale), 'Conflict');
      expect(await getProbe('a')).toEqual(current);
    });

    test('fails with Conflict and keeps the object when the uid precondition names another incarnation', async () => {
      const first = await ctx.store.create(ProbeType, probe('a'));
      await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      const second = await ctx.store.create(ProbeType, probe('a'));
      await failure(
        ctx.store.delete(ProbeType, ctx.ns, n('a'), { uid: first.metadata.uid ?? '' }),
        'Conflict',
      );
      expect(await getProbe('a')).toEqual(second);
    });

    test('only marks an object with finalizers: deletionTimestamp set, generation bumped, object returned', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
      const marked = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      expect(marked?.metadata.deletionTimestamp).toMatch(TIMESTAMP);
      expect(marked?.metadata.finalizers).toEqual([FINALIZER]);
      expect(marked?.metadata.generation).toBe(2);
      expect(marked?.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      expect(await getProbe('a')).toEqual(marked);
    });

    test('changes nothing when deleting an object already being deleted', async () => {
      await ctx.store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
      const marked = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      const again = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      expect(again).toEqual(marked);
    });

    test('removes an object being deleted once a replace removes its last finalizer', async () => {
      await ctx.store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
      const marked = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      if (marked === undefined) throw new Error('expected the object to be kept');
      await ctx.store.replace(ProbeType, { ...marked, metadata: { ...marked.metadata, finalizers: [] } });
      await gone('the probe', () => getProbe('a'));
    });

    test('keeps deletionTimestamp when a replace leaves it out', async () => {
      await ctx.store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
      const marked = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      if (marked === undefined) throw new Error('expected the object to be kept');
      const metadata = { ...marked.metadata, deletionTimestamp: undefined };
      const replaced = await ctx.store.replace(ProbeType, { ...marked, metadata, spec: { size: 2 } });
      expect(replaced.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp);
    });

    test('fails with Invalid when a replace adds a finalizer to an object being deleted', async () => {
      await ctx.store.create(ProbeType, probe('a', { size: 1 }, { finalizers: [FINALIZER] }));
      const marked = await ctx.store.delete(ProbeType, ctx.ns, n('a'));
      if (marked === undefined) throw new Error('expected the object to be kept');
      const finalizers = [FINALIZER, 'agentry.dev/another'];
      await failure(
        ctx.store.replace(ProbeType, { ...marked, metadata: { ...marked.metadata, finalizers } }),
        'Invalid',
      );
    });
  });
}
