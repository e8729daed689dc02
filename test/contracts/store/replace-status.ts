// Writing the status subresource: status only, under the same preconditions.
import { describe, expect } from '@jest/globals';
import { SecretType } from '../../../crds/core.js';
import { ProbeType } from '../probe.js';
import { failure, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeReplaceStatus(ctx: StoreContext): void {
  const { probe, secret, getProbe } = ctx;
  describe('replaceStatus', () => {
    test('writes only status: spec and metadata changes are ignored, generation is untouched', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const labels = { ...created.metadata.labels, extra: 'yes' };
      const written = await ctx.store.replaceStatus(ProbeType, {
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
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      const current = await ctx.store.replace(ProbeType, { ...created, spec: { size: 2 } });
      const stale = { resourceVersion: created.metadata.resourceVersion ?? '' };
      await failure(
        ctx.store.replaceStatus(ProbeType, { ...current, status: { phase: 'Ready' } }, stale),
        'Conflict',
      );
      expect(await getProbe('a')).toEqual(current);
    });

    test('fails with Invalid for a type without a status subresource', async () => {
      const created = await ctx.store.create(SecretType, secret('s'));
      await failure(ctx.store.replaceStatus(SecretType, created), 'Invalid');
    });

    test('fails with NotFound when the object does not exist', async () => {
      await failure(
        ctx.store.replaceStatus(ProbeType, { ...probe('missing'), status: { phase: 'Ready' } }),
        'NotFound',
      );
    });
  });
}
