import type { KubeObject, ResourceType } from '../crds/index.js';
import { retryOnConflict } from '../platform/store/retry-on-conflict.js';
import { isStoreError } from '../platform/store/types.js';
import type { ResourceStore } from '../platform/store/types.js';

/**
 * Read-modify-write with optimistic concurrency: reads the latest object, applies `mutate`, and
 * replaces it with the version it read; on Conflict (the operator or another replica wrote
 * meanwhile) it starts over from a fresh read, so no one's field is lost. `mutate` returning
 * undefined means "nothing to change". Resolves undefined when the object does not exist.
 */
export async function updateWithRetry<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  namespace: string | undefined,
  name: string,
  mutate: (current: T) => T | undefined,
): Promise<T | undefined> {
  return retryOnConflict(async () => {
    const current = await store.get(type, namespace, name);
    if (current === undefined) return undefined;
    const next = mutate(current);
    return next === undefined ? current : store.replace(type, next);
  });
}

/** Creates that lost a race are retried this often (an object deleted and created over and over). */
const CREATE_ATTEMPTS = 3;

/**
 * `updateWithRetry`, and when the object does not exist, `create()` it (undefined: leave it
 * missing). A create that lost the race to another writer changes that writer's object instead (an
 * object deleted and created over and over: give up). Resolves the object as written, or as it
 * was when there was nothing to change; undefined when it is (left) missing.
 */
export async function upsertWithRetry<T extends KubeObject>(
  store: ResourceStore,
  type: ResourceType<T>,
  namespace: string | undefined,
  name: string,
  mutate: (current: T) => T | undefined,
  create: (() => T | undefined) | undefined,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    const updated = await updateWithRetry(store, type, namespace, name, mutate);
    if (updated !== undefined) return updated;
    const created = create?.();
    if (created === undefined) return undefined;
    try {
      return await store.create(type, created);
    } catch (err) {
      if (!isStoreError(err, 'AlreadyExists') || attempt >= CREATE_ATTEMPTS) throw err;
    }
  }
}
