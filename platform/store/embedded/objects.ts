import { z } from 'zod';
import { ObjectMetaSchema } from '../../../crds/meta.js';
import type { ResourceType } from '../../../crds/resource.js';

/**
 * What the store holds internally: the Kubernetes envelope with validated metadata, any other fields
 * kept as they are. Typed objects are produced from it with the caller's `type.schema`.
 * Stored objects are never mutated: every change builds a new one.
 */
export const StoredObjectSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: ObjectMetaSchema,
});
export type StoredObject = z.infer<typeof StoredObjectSchema>;

/** `<plural>.<group>`, `core` for the core group: the index key and the directory name of a type. */
export const resourceOf = (type: Pick<ResourceType, 'plural' | 'group'>): string =>
  `${type.plural}.${type.group === '' ? 'core' : type.group}`;

/** Sorts by namespace, then name (cluster-scoped objects first), like etcd's key order. */
const sortKey = (namespace: string | undefined, name: string): string => `${namespace ?? ''}/${name}`;

export const describeObject = (resource: string, namespace: string | undefined, name: string): string =>
  namespace === undefined ? `${resource}/${name}` : `${resource} ${namespace}/${name}`;

export interface IndexedObject {
  readonly resource: string;
  readonly object: StoredObject;
}

/** A copy of `object` carrying `version` as its resourceVersion. */
export const withVersion = (object: StoredObject, version: number): StoredObject => ({
  ...object,
  metadata: { ...object.metadata, resourceVersion: String(version) },
});

export const hasFinalizers = (object: StoredObject): boolean => (object.metadata.finalizers ?? []).length > 0;

/** Every object the store holds, by resource and name, by uid, and by the uids of its owners. */
export class ObjectIndex {
  private readonly byResource = new Map<string, Map<string, StoredObject>>();
  private readonly byUid = new Map<string, IndexedObject>();
  private readonly dependents = new Map<string, Set<string>>();

  get(resource: string, namespace: string | undefined, name: string): StoredObject | undefined {
    return this.byResource.get(resource)?.get(sortKey(namespace, name));
  }

  withUid(uid: string): IndexedObject | undefined {
    return this.byUid.get(uid);
  }

  /** Objects of `resource`, in `namespace` or all, sorted by namespace and name. */
  list(resource: string, namespace?: string): StoredObject[] {
    const objects = this.byResource.get(resource);
    if (objects === undefined) return [];
    return [...objects.entries()]
      .filter(([, object]) => namespace === undefined || object.metadata.namespace === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
  }

  all(): IndexedObject[] {
    return [...this.byUid.values()];
  }

  /** Objects that name `uid` among their owners. */
  dependentsOf(uid: string): IndexedObject[] {
    const uids = this.dependents.get(uid) ?? new Set<string>();
    return [...uids].flatMap((dependent) => this.byUid.get(dependent) ?? []);
  }

  /** Adds or replaces (same resource, namespace and name) an object. */
  put(resource: string, object: StoredObject): void {
    const { namespace, name } = object.metadata;
    const previous = this.get(resource, namespace, name);
    if (previous !== undefined) this.remove(resource, previous);
    let objects = this.byResource.get(resource);
    if (objects === undefined) {
      objects = new Map();
      this.byResource.set(resource, objects);
    }
    objects.set(sortKey(namespace, name), object);
    const uid = object.metadata.uid;
    if (uid === undefined) return;
    this.byUid.set(uid, { resource, object });
    for (const owner of object.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(owner.uid);
      if (set === undefined) {
        set = new Set();
        this.dependents.set(owner.uid, set);
      }
      set.add(uid);
    }
  }

  remove(resource: string, object: StoredObject): void {
    const { namespace, name, uid } = object.metadata;
    this.byResource.get(resource)?.delete(sortKey(namespace, name));
    if (uid === undefined) return;
    this.byUid.delete(uid);
    for (const owner of object.metadata.ownerReferences ?? []) {
      const set = this.dependents.get(owner.uid);
      set?.delete(uid);
      if (set?.size === 0) this.dependents.delete(owner.uid);
    }
  }
}
