import type { ObjectMeta } from '../crds/index.js';

/** What identifies one version of a stored object. */
interface ObjectVersion {
  namespace: string | undefined;
  name: string;
  uid: string;
  resourceVersion: string;
}

const isVersion = (version: ObjectVersion, metadata: ObjectMeta): boolean =>
  version.resourceVersion === metadata.resourceVersion &&
  version.uid === metadata.uid &&
  version.name === metadata.name &&
  version.namespace === metadata.namespace;

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
  /**
   * The same entries by the object they were derived from: a read of a cached object (the same
   * object until its next version replaces it) finds its value without building the key. Checked
   * against the version, so an object changed in place is never answered for; an entry goes with
   * its object (so beyond `capacity` while the objects live: the informers' objects, at most).
   */
  private readonly byObject = new WeakMap<object, { version: ObjectVersion; value: T }>();

  constructor(private readonly capacity: number) {}

  derive<O extends { metadata: ObjectMeta }>(object: O, derive: (object: O) => T): T {
    const { namespace, name, uid, resourceVersion } = object.metadata;
    if (uid === undefined || uid === '' || resourceVersion === undefined || resourceVersion === '')
      return derive(object);
    const known = this.byObject.get(object);
    if (known !== undefined && isVersion(known.version, object.metadata)) return known.value;
    const value = this.byKey(object, `${namespace ?? ''}/${name}/${uid}/${resourceVersion}`, derive);
    this.byObject.set(object, { version: { namespace, name, uid, resourceVersion }, value });
    return value;
  }

  private byKey<O extends { metadata: ObjectMeta }>(object: O, key: string, derive: (object: O) => T): T {
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
