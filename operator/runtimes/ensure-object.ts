// Create-or-update of the Kubernetes objects a workload is made of, and their deletion, as only their
// controlling owner may: what the pod and kubevirt runtimes and the reconcilers share.
import type { KubeObject, ObjectMeta, OwnerReference, ResourceType } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';

/** The controller reference every workload object carries, so the cluster collects it with its owner. */
export function controllerReference(owner: KubeObject): OwnerReference {
  const uid = owner.metadata.uid;
  if (uid === undefined || uid === '') {
    throw new Error(
      `${owner.kind} ${owner.metadata.namespace ?? ''}/${owner.metadata.name} has no uid: read it from the store before applying a runtime`,
    );
  }
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether `actual` already holds everything in `wanted`: objects by their keys (extra keys, such as
 * server defaults, are fine), arrays element by element at the same length, scalars by equality.
 */
export function contains(actual: unknown, wanted: unknown): boolean {
  if (wanted === undefined) return true;
  if (Array.isArray(wanted)) {
    return (
      Array.isArray(actual) &&
      actual.length === wanted.length &&
      wanted.every((item, i) => contains(actual[i], item))
    );
  }
  if (isPlainObject(wanted)) {
    return (
      isPlainObject(actual) && Object.entries(wanted).every(([key, value]) => contains(actual[key], value))
    );
  }
  return Object.is(actual, wanted);
}

/** `wanted` laid over `actual`: objects merge key by key, anything else (arrays too) is replaced. */
export function deepMerge(actual: unknown, wanted: unknown): unknown {
  if (wanted === undefined) return actual;
  if (!isPlainObject(wanted) || !isPlainObject(actual)) return wanted;
  const merged: Record<string, unknown> = { ...actual };
  for (const [key, value] of Object.entries(wanted)) merged[key] = deepMerge(actual[key], value);
  return merged;
}

export interface EnsureOptions<T extends KubeObject> {
  /**
   * How an existing object's top-level fields (spec, data...) take ours: `deep` keeps fields we do
   * not set (server defaults, webhook additions); `replace` makes each of our fields exactly ours.
   */
  merge: 'deep' | 'replace';
  /** What we want of an existing object, when not all of `desired` may change (immutable fields). */
  owned?: (existing: T) => T;
  /** Annotations we own even when absent from `desired`: absent there means removed. */
  managedAnnotations?: readonly string[];
  /**
   * The operator's informer caches of `type`: the first try reads the object there instead of from
   * the store (a miss creates at once), and every write is recorded in them.
   */
  cache?: Caches | undefined;
}

const ENVELOPE = new Set(['apiVersion', 'kind', 'metadata', 'status']);
const bodyOf = (object: KubeObject): [string, unknown][] =>
  Object.entries(object).filter(([key]) => !ENVELOPE.has(key));

function isOurController(metadata: ObjectMeta, owner: OwnerReference | undefined): boolean {
  const controllers = (metadata.ownerReferences ?? []).filter((ref) => ref.controller === true);
  return owner === undefined || (controllers.length === 1 && contains(controllers[0], owner));
}

function metadataMatches(actual: ObjectMeta, wanted: ObjectMeta, managed: readonly string[]): boolean {
  const owner = wanted.ownerReferences?.find((ref) => ref.controller === true);
  return (
    contains(actual.labels ?? {}, wanted.labels ?? {}) &&
    contains(actual.annotations ?? {}, wanted.annotations ?? {}) &&
    managed.every((key) => actual.annotations?.[key] === wanted.annotations?.[key]) &&
    isOurController(actual, owner)
  );
}

function mergeMetadata(actual: ObjectMeta, wanted: ObjectMeta, managed: readonly string[]): ObjectMeta {
  const annotations = Object.fromEntries(
    Object.entries(actual.annotations ?? {}).filter(([key]) => !managed.includes(key)),
  );
  const others = (actual.ownerReferences ?? []).filter(
    (ref) => ref.controller !== true && !wanted.ownerReferences?.some((ours) => ours.uid === ref.uid),
  );
  return {
    ...actual,
    labels: { ...actual.labels, ...wanted.labels },
    annotations: { ...annotations, ...wanted.annotations },
    ownerReferences: [...others, ...(wanted.ownerReferences ?? [])],
  };
}

/** The object to write so `existing` holds what we own of `desired`; undefined when it already does. */
export function updatedObject<T extends KubeObject>(
  type: ResourceType<T>,
  existing: T,
  desired: T,
  options: EnsureOptions<T>,
): T | undefined {
  const wanted = options.owned?.(existing) ?? desired;
  const managed = options.managedAnnotations ?? [];
  const current = Object.fromEntries(bodyOf(existing));
  const body = bodyOf(wanted);
  // Replaced fields must match both ways: a rule we dropped is a difference too.
  const same = (key: string, value: unknown): boolean =>
    contains(current[key], value) && (options.merge === 'deep' || contains(value, current[key]));
  if (metadataMatches(existing.metadata, wanted.metadata, managed) && body.every(([k, v]) => same(k, v))) {
    return undefined;
  }
  const merged: Record<string, unknown> = {
    ...Object.fromEntries(Object.entries(existing)),
    metadata: mergeMetadata(existing.metadata, wanted.metadata, managed),
  };
  for (const [key, value] of body)
    merged[key] = options.merge === 'deep' ? deepMerge(current[key], value) : value;
  return type.schema.parse(merged);
}

/** A controller other than `desired`'s owns `existing`: never adopt it (it may hold another's data). */
function foreignController(existing: KubeObject, desired: KubeObject): OwnerReference | undefined {
  const ours = desired.metadata.ownerReferences?.find((ref) => ref.controller === true);
  const theirs = existing.metadata.ownerReferences?.find((ref) => ref.controller === true);
  return ours !== undefined && theirs !== undefined && theirs.uid !== ours.uid ? theirs : undefined;
}

/** The object `desired` names, from `cache` when given. */
async function readExisting<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  desired: T,
  cache: Caches | undefined,
): Promise<T | undefined> {
  const { namespace, name } = desired.metadata;
  return cache === undefined ? store.get(type, namespace, name) : cache.get(type, namespace, name);
}

/**
 * Creates `desired`, or brings the existing object's fields we own in line with it; writes nothing
 * when they already match. A Conflict or AlreadyExists (someone wrote in between) is retried once,
 * from a fresh read.
 */
export async function ensureObject<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  desired: T,
  options: EnsureOptions<T>,
): Promise<{ object: T; wrote: 'created' | 'updated' | 'unchanged' }> {
  const { namespace, name } = desired.metadata;
  const what = `${type.kind} ${namespace ?? ''}/${name}`;
  const { cache } = options;
  const written = (object: T): T => {
    cache?.observe(type, object);
    return object;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      // A cache a watch event behind fails the write (AlreadyExists, Conflict): the retry reads the store.
      const existing = await readExisting(store, type, desired, attempt === 1 ? cache : undefined);
      if (existing === undefined)
        return { object: written(await store.create(type, desired)), wrote: 'created' };
      const foreign = foreignController(existing, desired);
      if (foreign !== undefined) {
        throw new Error(
          `${what} is controlled by ${foreign.kind} ${foreign.name} (uid ${foreign.uid}), not by this one; it is left alone until it is gone`,
        );
      }
      const next =
        existing.metadata.deletionTimestamp === undefined
          ? updatedObject(type, existing, desired, options)
          : undefined;
      if (next === undefined) return { object: existing, wrote: 'unchanged' };
      return { object: written(await store.replace(type, next)), wrote: 'updated' };
    } catch (err) {
      const raced = isStoreError(err, 'Conflict') || isStoreError(err, 'AlreadyExists');
      if (raced && attempt === 1) continue;
      throw new Error(`ensuring ${what}`, { cause: err });
    }
  }
}

/** Deletes an object if it is still the incarnation `uid` names; gone already is fine. */
export async function deleteIfOwned<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  object: T,
): Promise<void> {
  const { namespace, name, uid } = object.metadata;
  try {
    await store.delete(type, namespace, name, uid === undefined ? {} : { uid });
  } catch (err) {
    // NotFound: already gone; Conflict: a newer incarnation with the same name, not ours to delete.
    if (isStoreError(err, 'NotFound') || isStoreError(err, 'Conflict')) return;
    throw new Error(`deleting ${type.kind} ${namespace ?? ''}/${name}`, { cause: err });
  }
}

/** Deletes the object named `name` if `ownerUid` controls it; anything else is left alone. */
export async function deleteControlled<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  namespace: string,
  name: string,
  ownerUid: string,
): Promise<void> {
  const object = await store.get(type, namespace, name);
  const refs = object?.metadata.ownerReferences ?? [];
  if (object !== undefined && refs.some((ref) => ref.controller === true && ref.uid === ownerUid)) {
    await deleteIfOwned(store, type, object);
  }
}
