import type { KubeObject } from '../crds/index.js';
import { Informer } from '../platform/store/informer.js';
import type { InformerOptions } from '../platform/store/informer.js';
import type { ResourceStore } from '../platform/store/types.js';
import type { ResourceType } from '../crds/resource.js';

/** Where one object stands in the newest-first lists: its creation time (ISO text), then its name. */
interface Position {
  readonly createdAt: string;
  readonly name: string;
}

/** Where an object belongs: its position, and every list (bucket) it is in; undefined: in none. */
export interface Placement {
  createdAt: string;
  buckets: readonly string[];
}

/** Newest first; the same second is ordered by name, so pages are stable. Plain code-point order: cheap. */
function compare(a: Position, b: Position): number {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? -1 : 1;
  if (a.name === b.name) return 0;
  return a.name < b.name ? -1 : 1;
}

/** The index of the first element not before `position` (binary search). */
function lowerBound(list: readonly Position[], position: Position): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid] as Position, position) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many of `a` come before the `offset`-th element of the merge of `a` and `b` (binary search). */
function splitOf(a: readonly Position[], b: readonly Position[], offset: number): number {
  let lo = Math.max(0, offset - b.length);
  let hi = Math.min(offset, a.length);
  while (lo < hi) {
    const i = (lo + hi) >>> 1;
    const j = offset - i;
    if (j > 0 && compare(b[j - 1] as Position, a[i] as Position) > 0) lo = i + 1;
    else hi = i;
  }
  return lo;
}

/**
 * Newest-first lists of cached objects, one per bucket (an organization, the tasks of one
 * workspace, ...), kept sorted as changes arrive (binary search; a change costs a move of the
 * array's tail, no sort). A page costs O(log n + limit) however large the organization grows:
 * `total` is a list's length, and pages walk from a binary-searched position. Positions never
 * change for an object (creation time and name are immutable), so a status change moves nothing.
 */
export class ListIndex<T extends KubeObject> {
  private readonly lists = new Map<string, Position[]>();
  private readonly placed = new Map<string, { position: Position; buckets: readonly string[] }>();

  constructor(private readonly placementOf: (object: T) => Placement | undefined) {}

  /** Re-places the object cached under `key` after a change; undefined: it is gone. */
  update(key: string, object: T | undefined): void {
    const before = this.placed.get(key);
    const placement = object === undefined ? undefined : this.placementOf(object);
    if (placement === undefined || object === undefined) {
      if (before !== undefined) this.removeFrom(before.buckets, before.position);
      this.placed.delete(key);
      return;
    }
    const position = { createdAt: placement.createdAt, name: object.metadata.name };
    if (before !== undefined && compare(before.position, position) === 0) {
      const kept = new Set(placement.buckets);
      const gone = before.buckets.filter((bucket) => !kept.has(bucket));
      const came = placement.buckets.filter((bucket) => !before.buckets.includes(bucket));
      if (gone.length === 0 && came.length === 0) return;
      this.removeFrom(gone, position);
      this.addTo(came, position);
    } else {
      if (before !== undefined) this.removeFrom(before.buckets, before.position);
      this.addTo(placement.buckets, position);
    }
    this.placed.set(key, { position, buckets: [...placement.buckets] });
  }

  /** How many objects a bucket holds. */
  size(bucket: string): number {
    return this.lists.get(bucket)?.length ?? 0;
  }

  /** Names of one page of the newest-first merge of one or two buckets (e.g. shared tasks and the caller's private ones). */
  page(buckets: readonly [string] | readonly [string, string], offset: number, limit: number): string[] {
    const a = this.lists.get(buckets[0]) ?? [];
    const b = buckets[1] === undefined ? [] : (this.lists.get(buckets[1]) ?? []);
    let i = splitOf(a, b, offset);
    let j = offset - i;
    const names: string[] = [];
    while (names.length < limit && (i < a.length || j < b.length)) {
      const fromA = j >= b.length || (i < a.length && compare(a[i] as Position, b[j] as Position) < 0);
      names.push((fromA ? a[i++] : b[j++])?.name ?? '');
    }
    return names;
  }

  private addTo(buckets: readonly string[], position: Position): void {
    for (const bucket of buckets) {
      let list = this.lists.get(bucket);
      if (list === undefined) {
        list = [];
        this.lists.set(bucket, list);
      }
      list.splice(lowerBound(list, position), 0, position);
    }
  }

  private removeFrom(buckets: readonly string[], position: Position): void {
    for (const bucket of buckets) {
      const list = this.lists.get(bucket);
      if (list === undefined) continue;
      const at = lowerBound(list, position);
      if (at < list.length && compare(list[at] as Position, position) === 0) list.splice(at, 1);
      if (list.length === 0) this.lists.delete(bucket);
    }
  }
}

/** A bucket's key from its parts (an organization's namespace, a filter's value, ...). */
export const bucketKey = (...parts: readonly string[]): string => parts.join('\u0000');

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/**
 * An informer whose cache keeps a ListIndex in step: every watch event and every write this
 * process observes re-places the object, as the cache holds it after the change.
 */
export class IndexedInformer<T extends KubeObject> extends Informer<T> {
  readonly index: ListIndex<T>;

  constructor(
    store: ResourceStore,
    type: ResourceType<T>,
    options: InformerOptions<T>,
    placementOf: (object: T) => Placement | undefined,
  ) {
    const index = new ListIndex(placementOf);
    super(store, type, {
      ...options,
      onEvent: (event) => {
        index.update(keyOf(event.object), event.type === 'DELETED' ? undefined : event.object);
        options.onEvent?.(event);
      },
    });
    this.index = index;
  }

  override observe(object: T, deleted = false): void {
    super.observe(object, deleted);
    this.index.update(keyOf(object), this.get(object.metadata.namespace, object.metadata.name));
  }
}
