import { ContextLakeType } from '../../crds/context-lake.js';
import type { ContextLake, ContextLakeStatus } from '../../crds/context-lake.js';
import { deepEqual } from '../../platform/store/merge.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';

/** The ContextLake reconciler writes the same status; a burst of its writes is outrun in this many tries. */
const WRITE_ATTEMPTS = 10;

/**
 * Read-merge-write of a ContextLake's status with a resourceVersion precondition, retried on
 * Conflict: `change` computes the new status from the freshly read lake (it must keep what it does
 * not own). Returns the lake as written (or as read, when nothing changed), undefined once it is
 * gone; throws on other store errors, or when conflicts never end.
 */
export async function updateLakeStatus(
  store: ResourceStore,
  caches: Caches,
  key: { namespace: string; name: string },
  change: (lake: ContextLake) => ContextLakeStatus,
): Promise<ContextLake | undefined> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const lake = await store.get(ContextLakeType, key.namespace, key.name);
    if (lake === undefined) return undefined;
    const status = change(lake);
    if (deepEqual(status, lake.status ?? {})) return lake;
    try {
      const written = await store.replaceStatus(
        ContextLakeType,
        { ...lake, status },
        { resourceVersion: lake.metadata.resourceVersion },
      );
      caches.observe(ContextLakeType, written);
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
