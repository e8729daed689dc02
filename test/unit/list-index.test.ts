import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../crds/index.js';
import { ListIndex } from '../../api/list-index.js';

/** A cached object reduced to what the index reads: name, creation time and the lists it is in. */
interface Item extends KubeObject {
  spec: { createdAt: string; buckets: string[] };
}

const item = (name: string, createdAt: string, buckets: string[]): Item => ({
  apiVersion: 'test/v1',
  kind: 'Item',
  metadata: { name, namespace: 'ns' },
  spec: { createdAt, buckets },
});

const newIndex = (): ListIndex<Item> =>
  new ListIndex<Item>((object) =>
    object.spec.buckets.length === 0
      ? undefined
      : { createdAt: object.spec.createdAt, buckets: object.spec.buckets },
  );

/** The same list the slow way: filter, sort newest first (ties by name), slice. */
function bruteForce(items: Iterable<Item>, buckets: string[], offset: number, limit: number): string[] {
  return [...items]
    .filter((object) => object.spec.buckets.some((bucket) => buckets.includes(bucket)))
    .sort(
      (a, b) =>
        (a.spec.createdAt === b.spec.createdAt ? 0 : a.spec.createdAt > b.spec.createdAt ? -1 : 1) ||
        (a.metadata.name < b.metadata.name ? -1 : 1),
    )
    .slice(offset, offset + limit)
    .map((object) => object.metadata.name);
}

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ListIndex', () => {
  it('pages newest first, ties by name, merging two disjoint lists exactly as a full sort would', () => {
    const next = random(7);
    const index = newIndex();
    const live = new Map<string, Item>();
    for (let step = 0; step < 3000; step++) {
      const name = `item-${Math.floor(next() * 300)}`;
      if (next() < 0.2) {
        live.delete(name);
        index.update(name, undefined);
      } else {
        // Creation times collide often (whole seconds), so the tie-break by name is exercised.
        const second = String(Math.floor(next() * 60)).padStart(2, '0');
        const createdAt = live.get(name)?.spec.createdAt ?? `2026-01-01T00:00:${second}Z`;
        // Like a task's audience: in the organization's list or in one owner's, never both.
        const audience = next() < 0.5 ? ['a'] : next() < 0.8 ? ['b'] : [];
        const buckets = [...audience, ...(next() < 0.5 ? ['c'] : [])];
        const object = item(name, createdAt, buckets);
        if (buckets.length === 0) live.delete(name);
        else live.set(name, object);
        index.update(name, object);
      }
      if (step % 25 !== 0) continue;
      const offset = Math.floor(next() * 150);
      const limit = 1 + Math.floor(next() * 40);
      expect(index.page(['a', 'b'], offset, limit)).toEqual(
        bruteForce(live.values(), ['a', 'b'], offset, limit),
      );
      expect(index.page(['c'], offset, limit)).toEqual(bruteForce(live.values(), ['c'], offset, limit));
      expect(index.size('a')).toBe([...live.values()].filter((o) => o.spec.buckets.includes('a')).length);
    }
  });

  it('keeps a changed object where it was: a status change neither moves nor repeats it on any page', () => {
    const index = newIndex();
    const names = Array.from({ length: 50 }, (_v, i) => `task-${String(i).padStart(2, '0')}`);
    for (const [i, name] of names.entries())
      index.update(name, item(name, `2026-01-01T00:00:${String(i % 10).padStart(2, '0')}Z`, ['org']));
    const before = index.page(['org'], 0, 50);
    const walked: string[] = [];
    for (let offset = 0; offset < 50; offset += 7) {
      walked.push(...index.page(['org'], offset, 7));
      // Between pages every object changes (another bucket comes and goes): none moves.
      for (const [i, name] of names.entries())
        index.update(
          name,
          item(name, `2026-01-01T00:00:${String(i % 10).padStart(2, '0')}Z`, ['org', `s${offset}`]),
        );
    }
    expect(walked).toEqual(before);
    expect(new Set(walked).size).toBe(50);
  });

  it('drops an object from every list when it leaves them (deleted, or placed nowhere)', () => {
    const index = newIndex();
    index.update('x', item('x', '2026-01-01T00:00:00Z', ['a', 'b']));
    index.update('x', item('x', '2026-01-01T00:00:00Z', []));
    expect([index.size('a'), index.size('b')]).toEqual([0, 0]);
    index.update('y', item('y', '2026-01-01T00:00:00Z', ['a']));
    index.update('y', undefined);
    expect(index.page(['a'], 0, 10)).toEqual([]);
  });
});
