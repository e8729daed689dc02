import type { KubeObject } from '../../crds/resource.js';
import type { InformerEvent } from '../../platform/store/informer.js';

/**
 * The cached objects of one type grouped by a value they carry (a Task's workspace), per namespace:
 * a lookup instead of a scan of the whole cache. Answers new arrays, so callers cannot change it.
 */
export interface CacheIndex<T extends KubeObject> {
  /** The cached objects of `namespace` whose indexed value is `value`, as the cache holds them now. */
  list(namespace: string | undefined, value: string): T[];
}

type CachedObject<T> = (namespace: string | undefined, name: string) => T | undefined;
type ObjectRef = { namespace: string | undefined; name: string };

const objectKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;
// A namespace never holds a NUL, so one namespace's bucket never answers for another's.
const bucketKey = (namespace: string | undefined, value: string): string => `${namespace ?? ''}\0${value}`;

/**
 * Keeps, per (namespace, value), the names of the objects carrying that value, from the informer's
 * events (an object whose value changes moves buckets; a deleted one leaves). It holds names, not
 * objects: `list` reads each from the cache, so it sees what the cache sees (a reconciler's own
 * `observe`d writes included) and drops any whose value no longer matches.
 */
export class ValueIndex<T extends KubeObject> implements CacheIndex<T> {
  private readonly buckets = new Map<string, Map<string, ObjectRef>>();
  private readonly bucketOf = new Map<string, string>();

  constructor(
    private readonly valueOf: (object: T) => string | undefined,
    private readonly cached: CachedObject<T>,
  ) {}

  apply(event: InformerEvent<T>): void {
    const { namespace, name } = event.object.metadata;
    const key = objectKey(namespace, name);
    const value = event.type === 'DELETED' ? undefined : this.valueOf(event.object);
    const next = value === undefined ? undefined : bucketKey(namespace, value);
    const previous = this.bucketOf.get(key);
    if (previous === next) return;
    if (previous !== undefined) this.leave(previous, key);
    if (next === undefined) {
      this.bucketOf.delete(key);
      return;
    }
    this.bucketOf.set(key, next);
    const bucket = this.buckets.get(next) ?? new Map<string, ObjectRef>();
    bucket.set(key, { namespace, name });
    this.buckets.set(next, bucket);
  }

  list(namespace: string | undefined, value: string): T[] {
    const found: T[] = [];
    for (const ref of this.buckets.get(bucketKey(namespace, value))?.values() ?? []) {
      const object = this.cached(ref.namespace, ref.name);
      if (object !== undefined && this.valueOf(object) === value) found.push(object);
    }
    return found;
  }

  private leave(bucket: string, key: string): void {
    const members = this.buckets.get(bucket);
    members?.delete(key);
    if (members?.size === 0) this.buckets.delete(bucket);
  }
}
