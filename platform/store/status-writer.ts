import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { deepEqual } from './merge.js';
import { retryOnConflict } from './retry-on-conflict.js';
import { isStoreError } from './types.js';
import type { ResourceStore } from './types.js';

/** A cache told about a write, so its next read is not older than what was written (the operator's Caches). */
export interface WriteObserver {
  observe<T extends KubeObject>(type: ResourceType<T>, object: T): void;
}

/** A resource with a status subresource. */
export type WithStatus = KubeObject & { status?: unknown };
/** The status of such a resource, as written. */
export type StatusOf<T extends WithStatus> = NonNullable<T['status']>;

/**
 * Whether `next` is what is stored already. Fields set to undefined do not count (a write drops
 * them); a condition whose status did not change keeps its lastTransitionTime (setCondition), so an
 * unchanged observation compares equal.
 */
export const statusUnchanged = (stored: unknown, next: unknown): boolean =>
  deepEqual(JSON.parse(JSON.stringify(stored ?? {})), JSON.parse(JSON.stringify(next ?? {})));

export interface WriteStatusOptions {
  /** Write only over the version read (Conflict when another writer came first); otherwise unconditionally. */
  precondition?: boolean;
  /** Told about the write, so the writer's next read from the cache is not older than it. */
  caches?: WriteObserver | undefined;
}

/**
 * Every reconciler's status write: `status` onto `object` in one write of the status subresource,
 * skipped when nothing would change (a write that changes nothing still costs a round trip and, on
 * some stores, a watch event that wakes every controller watching). Resolves the object as
 * written, or undefined when nothing needed writing.
 */
export async function writeStatus<T extends WithStatus>(
  store: ResourceStore,
  type: ResourceType<T>,
  object: T,
  status: StatusOf<T>,
  options: WriteStatusOptions = {},
): Promise<T | undefined> {
  if (statusUnchanged(object.status, status)) return undefined;
  const written = await store.replaceStatus(
    type,
    { ...object, status },
    options.precondition === true ? { resourceVersion: object.metadata.resourceVersion } : {},
  );
  options.caches?.observe(type, written);
  return written;
}

/** Tries of a status shared by two writers before a burst of the other's writes wins. */
const SHARED_STATUS_ATTEMPTS = 10;

export interface UpdateStatusOptions<T> {
  caches?: WriteObserver | undefined;
  /** The object just read by the caller: the first try merges onto it instead of reading again. */
  read?: T | undefined;
}

/**
 * Read-merge-write of a status that several writers share (a ContextLake's reconciler and its S3
 * notification consumer; a Task's reconciler and its webhook deliveries): `change` computes the
 * status from the freshly read object and must keep the fields it does not own; the write carries
 * the version read and starts over on Conflict. Skips the write when nothing changed. Resolves the
 * object as written (or as read, when nothing changed), undefined once it is gone; throws on other
 * store errors, or when conflicts never end.
 */
export async function updateStatus<T extends WithStatus>(
  store: ResourceStore,
  type: ResourceType<T>,
  key: { namespace: string | undefined; name: string },
  change: (current: T) => StatusOf<T>,
  options: UpdateStatusOptions<T> = {},
): Promise<T | undefined> {
  let known = options.read;
  const what = `the status of ${type.kind} ${key.namespace ?? ''}/${key.name}`;
  try {
    return await retryOnConflict(async () => {
      const current = known ?? (await store.get(type, key.namespace, key.name));
      known = undefined;
      if (current === undefined) return undefined;
      const written = await writeStatus(store, type, current, change(current), {
        precondition: true,
        caches: options.caches,
      });
      return written ?? current;
    }, SHARED_STATUS_ATTEMPTS);
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return undefined;
    if (isStoreError(err, 'Conflict'))
      throw new Error(`writing ${what}: too many conflicting writes`, { cause: err });
    throw new Error(`writing ${what}`, { cause: err });
  }
}
