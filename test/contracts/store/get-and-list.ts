// Reading objects: copies, sorting, namespaces and label selectors.
import { describe, expect } from '@jest/globals';
import { ProbeType } from '../probe.js';
import { RUN_LABEL, failure, test } from './context.js';
import type { StoreContext } from './context.js';

export function describeGetAndList(ctx: StoreContext): void {
  const { n, runSelector, probe, getProbe } = ctx;
  /** Probes labelled color=red and color=blue, and one without a color. */
  const createColoredProbes = async (): Promise<void> => {
    await ctx.store.create(ProbeType, probe('red', { size: 1 }, { labels: { color: 'red' } }));
    await ctx.store.create(ProbeType, probe('blue', { size: 1 }, { labels: { color: 'blue' } }));
    await ctx.store.create(ProbeType, probe('plain'));
  };
  /** Names of this test's probes that the selector matches. */
  const names = async (selector: string): Promise<string[]> =>
    (await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector(selector) })).items.map(
      (p) => p.metadata.name,
    );

  describe('get and list', () => {
    test('get returns undefined for a missing object', async () => {
      expect(await getProbe('missing')).toBeUndefined();
    });

    test('hands out copies: mutating a returned object does not change the store', async () => {
      const created = await ctx.store.create(ProbeType, probe('a', { size: 1 }));
      created.spec.size = 99;
      const read = await getProbe('a');
      if (read === undefined) throw new Error('probe missing');
      read.metadata.labels = {};
      const again = await getProbe('a');
      expect(again?.spec.size).toBe(1);
      expect(again?.metadata.labels).toEqual({ [RUN_LABEL]: ctx.run });
    });

    test("lists a namespace's objects sorted by name, with a resourceVersion", async () => {
      for (const base of ['c', 'a', 'b']) await ctx.store.create(ProbeType, probe(base));
      const result = await ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: runSelector() });
      expect(result.items.map((p) => p.metadata.name)).toEqual([n('a'), n('b'), n('c')]);
      expect(result.resourceVersion).toMatch(/.+/);
    });

    test('lists across all namespaces when no namespace is given', async () => {
      await ctx.store.create(ProbeType, probe('a'));
      const result = await ctx.store.list(ProbeType, { labelSelector: runSelector() });
      expect(result.items.map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name}`)).toEqual([
        `${ctx.ns}/${n('a')}`,
      ]);
    });

    test('filters by equality selectors (=, ==, !=)', async () => {
      await createColoredProbes();
      expect(await names('color=red')).toEqual([n('red')]);
      expect(await names('color==blue')).toEqual([n('blue')]);
      expect(await names('color!=red')).toEqual([n('blue'), n('plain')]);
    });

    test('filters by set-based selectors (in, notin, exists, !exists)', async () => {
      await createColoredProbes();
      expect(await names('color in (red, green)')).toEqual([n('red')]);
      expect(await names('color notin (red)')).toEqual([n('blue'), n('plain')]);
      expect(await names('color')).toEqual([n('blue'), n('red')]);
      expect(await names('!color')).toEqual([n('plain')]);
    });

    test('fails with Invalid for a malformed label selector', async () => {
      await failure(
        ctx.store.list(ProbeType, { namespace: ctx.ns, labelSelector: 'color in (red' }),
        'Invalid',
      );
    });
  });
}
