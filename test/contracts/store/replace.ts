// Replacing objects: optimistic concurrency, generation and the fields a caller cannot change.
import { describe, expect } from '@jest/globals';
import { ProbeType } from '../probe.js';
import { failure, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeReplace(ctx: StoreContext): void {
  const { n, probe, getProbe } = ctx;
  describe('replace', () => {
    test('stores the change under a new resourceVersion when given the current one', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const replaced = await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      expect(replaced.spec.size).toBe(2);
      expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      expect(await getProbe('a')).toEqual(replaced);
    });

    test('fails with Conflict and changes nothing when the resourceVersion is stale', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const current = await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      await failure(ctx.store.replace(ProbeType, { ...created, spec: { size: 3 } }), 'Conflict');
      expect(await getProbe('a')).toEqual(current);
    });

    test('fails with Invalid when the object has no resourceVersion', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const metadata = { ...created.metadata, resourceVersion: undefined };
      await failure(ctx.store.replace(ProbeType, { ...created, metadata, spec: { size: 2 } }), 'Invalid');
      expect((await getProbe('a'))?.spec.size).toBe(1);
    });

    test('fails with NotFound when the object does not exist', async () => {
      const created = await ctx.store.create(ProbeType, probe('a'));
      const other = { ...created, metadata: { ...created.metadata, name: n('missing'), uid: undefined } };
      await failure(ctx.store.replace(ProbeType, other), 'NotFound');
    });

    test('fails with Conflict when the uid names another incarnation of the object', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const foreign = {
        ...created,
        metadata: { ...created.metadata, uid: '11111111-1111-1111-1111-111111111111' },
      };
      await failure(ctx.store.replace(ProbeType, { ...foreign, spec: { size: 2 } }), 'Conflict');
    });

    test('increments generation when the spec changes', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const replaced = await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      expect(replaced.metadata.generation).toBe(2);
    });

    test('keeps generation when only metadata changes', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const labels = { ...created.metadata.labels, extra: 'yes' };
      const replaced = await ctx.store.replace(ProbeType, {
        ...created,
        metadata: { ...created.metadata, labels },
      });
      expect(replaced.metadata.labels).toEqual(labels);
      expect(replaced.metadata.generation).toBe(1);
      expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    });

    test('keeps uid and creationTimestamp whatever the caller sends', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const metadata = { ...created.metadata, uid: undefined, creationTimestamp: '2000-01-01T00:00:00Z' };
      const replaced = await ctx.store.replace(ProbeType, { ...created, metadata, spec: { size: 2 } });
      expect(replaced.metadata.uid).toBe(created.metadata.uid);
      expect(replaced.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    });

    test('ignores status on a type whose status is a subresource, keeping the stored status', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const withStatus = await ctx.store.replaceStatus(ProbeType, { ...created, status: { phase: 'Ready' } });
      const replaced = await ctx.store.replace(ProbeType, {
        ...withStatus,
        spec: { size: 2 },
        status: { phase: 'Hacked' },
      });
      expect(replaced.spec.size).toBe(2);
      expect(replaced.status).toEqual({ phase: 'Ready' });
    });

    test('keeps the resourceVersion when the replace changes nothing', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const same = await ctx.store.replace(ProbeType, created);
      expect(same).toEqual(created);
    });
  });
}
