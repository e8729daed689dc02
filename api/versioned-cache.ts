import type { ObjectMeta } from '../crds/index.js';

/**
 * Values derived from one version of a stored object (a presented record, a parsed Secret), so a
 * read of an unchanged object does not derive them again. The key is the object's namespace, name,
 * uid and resourceVersion: every write makes a new resourceVersion, so an entry can never answer
 * for another version, and the uid never for another object (another organization's included).
 * Objects without uid or resourceVersion (not from a store) are derived every time. At most
 * `capacity` entries, the least recently used dropped first. Callers must not mutate what it returns.
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  derive<O extends { metadata: ObjectMeta }>(object: O, derive: (object: O) => T): T {
    const { namespace, name, uid, resourceVersion } = object.metadata;
    if (uid === undefined || uid === '' || resourceVersion === undefined || resourceVersion === '')
      return derive(object);
    const key = `${namespace ?? ''}/${name}/${uid}/${resourceVersion}`;
    if (this.entries.has(key)) {
      const hit = this.entries.get(key) as T; // sound: has(key) just held, and values may be undefined
      this.entries.delete(key); // re-inserted: Map order is the recency order
      this.entries.set(key, hit);
      return hit;
    }
    const value = derive(object);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}
