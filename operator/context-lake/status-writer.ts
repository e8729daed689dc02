import { ContextLakeType } from '../../crds/context-lake/types.js';
import type { ContextLake, ContextLakeStatus } from '../../crds/context-lake/types.js';
import { deepEqual } from '../../platform/store/merge.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';

/** Two writers (the ContextLake reconciler, the notification consumer) share the status; a burst of the other's writes is outrun in this many tries. */
const WRITE_ATTEMPTS = 10;

export interface UpdateLakeStatusOptions {
  /** Told about each write, so the writer's next read from the cache is not older than it. */
  caches?: Caches | undefined;
  /** The lake just read by the caller: the first attempt merges onto it instead of reading again. */
  read?: ContextLake | undefined;
}

/**
 * Read-merge-write of a ContextLake's status with a resourceVersion precondition, retried on
 * Conflict: `change` computes the new status from the freshly read lake (it must keep what it does
 * not own, so the other writer's fields survive). Skips the write when nothing changed. Returns the
 * lake as written (or as read, when nothing changed), undefined once it is gone; throws on other
 * store errors, or when conflicts never end.
 */
export async function updateLakeStatus(
  store: ResourceStore,
  key: { namespace: string; name: string },
  change: (lake: ContextLake) => ContextLakeStatus,
  options: UpdateLakeStatusOptions = {},
): Promise<ContextLake | undefined> {
  let known = options.read;
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const lake = known ?? (await store.get(ContextLakeType, key.namespace, key.name));
    known = undefined;
    if (lake === undefined) return undefined;
    const status = change(lake);
    if (deepEqual(status, lake.status ?? {})) return lake;
    try {
      const written = await store.replaceStatus(
        ContextLakeType,
        { ...lake, status },
        { resourceVersion: lake.metadata.resourceVersion },
      );
      options.caches?.observe(ContextLakeType, written);
      return written;
    } catch (err) {
      if (isStoreError(err, 'NotFound')) return undefined;
      if (!isStoreError(err, 'Conflict'))
        throw new Error(`writing the status of context lake ${key.namespace}/${key.name}`, { cause: err });
    }
  }
  throw new Error(
    `writing the status of context lake ${key.namespace}/${key.name}: too many conflicting writes`,
  );
}
