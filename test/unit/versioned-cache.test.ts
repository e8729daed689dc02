import { describe, expect, it } from '@jest/globals';
import type { ObjectMeta } from '../../crds/index.js';
import { VersionedCache } from '../../api/versioned-cache.js';

const object = (metadata: Partial<ObjectMeta>): { metadata: ObjectMeta } => ({
  metadata: { name: 'task-1', namespace: 'org-a', uid: 'u1', resourceVersion: '7', ...metadata },
});

/** A cache whose derivations are counted and name the version they were derived from. */
function counted(capacity = 10) {
  const cache = new VersionedCache<string>(capacity);
  let derivations = 0;
  const derive = (o: { metadata: ObjectMeta }): string => {
    derivations++;
    return `${o.metadata.namespace ?? ''}/${o.metadata.uid ?? ''}@${o.metadata.resourceVersion ?? ''}`;
  };
  return { get: (o: { metadata: ObjectMeta }) => cache.derive(o, derive), derivations: () => derivations };
}

describe('VersionedCache', () => {
  it('derives one version of an object once', () => {
    const cache = counted();
    expect(cache.get(object({}))).toBe('org-a/u1@7');
    expect(cache.get(object({}))).toBe('org-a/u1@7');
    expect(cache.derivations()).toBe(1);
  });

  it('derives again for a new resourceVersion', () => {
    const cache = counted();
    cache.get(object({}));
    expect(cache.get(object({ resourceVersion: '8' }))).toBe('org-a/u1@8');
  });

  it('never answers for another object of the same name and version (another uid or namespace)', () => {
    const cache = counted();
    cache.get(object({}));
    expect(cache.get(object({ uid: 'u2' }))).toBe('org-a/u2@7');
    expect(cache.get(object({ namespace: 'org-b' }))).toBe('org-b/u1@7');
  });

  it('derives again for the same object changed in place to a new resourceVersion', () => {
    const cache = counted();
    const task = object({});
    cache.get(task);
    task.metadata.resourceVersion = '8';
    expect(cache.get(task)).toBe('org-a/u1@8');
    expect(cache.derivations()).toBe(2);
  });

  it('derives every time for an object without uid or resourceVersion', () => {
    const cache = counted();
    cache.get(object({ uid: undefined }));
    cache.get(object({ uid: undefined }));
    cache.get(object({ resourceVersion: undefined }));
    expect(cache.derivations()).toBe(3);
  });

  it('drops the least recently used entry beyond its capacity', () => {
    const cache = counted(2);
    cache.get(object({ uid: 'a' }));
    cache.get(object({ uid: 'b' }));
    cache.get(object({ uid: 'a' })); // b is now the least recently used
    cache.get(object({ uid: 'c' }));
    cache.get(object({ uid: 'a' }));
    expect(cache.derivations()).toBe(3);
    cache.get(object({ uid: 'b' }));
    expect(cache.derivations()).toBe(4);
  });
});
