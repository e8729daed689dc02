// Garbage collection: dependents follow their owners, as on Kubernetes.
import { describe, expect } from '@jest/globals';
import { SecretType } from '../../../crds/core.js';
import { ProbeType } from '../probe.js';
import { FINALIZER, eventually, ownerRef, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeGarbageCollection(ctx: StoreContext): void {
  const { n, probe, secret, getProbe, getSecret, gone } = ctx;
  describe('garbage collection', () => {
    test('deletes the dependents of a removed owner, of any type, recursively', async () => {
      const owner = await ctx.store.create(ProbeType, probe('owner'));
      const child = await ctx.store.create(
        ProbeType,
        probe('child', { size: 1 }, { ownerReferences: [ownerRef(owner)] }),
      );
      await ctx.store.create(SecretType, secret('grandchild', { ownerReferences: [ownerRef(child)] }));
      await ctx.store.delete(ProbeType, ctx.ns, n('owner'));
      await gone('the dependent probe', () => getProbe('child'));
      await gone('the dependent secret', () => getSecret('grandchild'));
    });

    test('keeps a dependent while another of its owners exists', async () => {
      const first = await ctx.store.create(ProbeType, probe('first'));
      const second = await ctx.store.create(ProbeType, probe('second'));
      const shared = [ownerRef(first), ownerRef(second)];
      await ctx.store.create(SecretType, secret('shared', { ownerReferences: shared }));
      await ctx.store.create(SecretType, secret('canary', { ownerReferences: [ownerRef(first)] }));
      await ctx.store.delete(ProbeType, ctx.ns, n('first'));
      await gone('the canary dependent of the deleted owner', () => getSecret('canary'));
      expect(await getSecret('shared')).toBeDefined();
    });

    test('marks a dependent with finalizers for deletion and removes it once they are gone', async () => {
      const owner = await ctx.store.create(ProbeType, probe('owner'));
      const metadata = { ownerReferences: [ownerRef(owner)], finalizers: [FINALIZER] };
      await ctx.store.create(ProbeType, probe('held', { size: 1 }, metadata));
      await ctx.store.delete(ProbeType, ctx.ns, n('owner'));
      await eventually('the dependent to be marked for deletion', async () => {
        return (await getProbe('held'))?.metadata.deletionTimestamp !== undefined;
      });
      const held = await getProbe('held');
      if (held === undefined) throw new Error('the dependent with a finalizer was removed');
      await ctx.store.replace(ProbeType, { ...held, metadata: { ...held.metadata, finalizers: [] } });
      await gone('the dependent', () => getProbe('held'));
    });
  });
}
