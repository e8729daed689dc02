import type { ResourceType } from '../../../crds/resource.js';
import { deepEqual } from '../merge.js';
import { StoreError } from '../types.js';
import type { StoredObject } from './objects.js';
import { formatTimestamp } from './validate.js';

// Fields set to undefined here are dropped by validateForStorage's JSON round trip.

/**
 * The object `create` stores, before validation and versioning: system fields set by the server
 * (uid, creationTimestamp, generation 1), caller-supplied ones dropped, and status dropped when it is
 * a subresource.
 */
export function prepareCreate(type: ResourceType, input: StoredObject, uid: string, now: Date): StoredObject {
  const metadata = { ...input.metadata, uid, creationTimestamp: formatTimestamp(now), generation: 1 };
  delete metadata.resourceVersion;
  delete metadata.deletionTimestamp;
  const candidate: StoredObject = { ...input, metadata };
  if (type.hasStatusSubresource) delete candidate.status;
  return candidate;
}

function checkDeletionFields(current: StoredObject, input: StoredObject): void {
  const deleting = current.metadata.deletionTimestamp !== undefined;
  if (!deleting && input.metadata.deletionTimestamp !== undefined) {
    throw new StoreError(
      'Invalid',
      `${current.kind} "${current.metadata.name}" is invalid: metadata.deletionTimestamp: field is immutable; only delete sets it`,
    );
  }
  const before = new Set(current.metadata.finalizers ?? []);
  const added = (input.metadata.finalizers ?? []).filter((finalizer) => !before.has(finalizer));
  if (deleting && added.length > 0) {
    throw new StoreError(
      'Invalid',
      `${current.kind} "${current.metadata.name}" is invalid: metadata.finalizers: no new finalizers can be added while the object is being deleted (${added.join(', ')})`,
    );
  }
}

/**
 * The object `replace` stores: the caller's object with the server-owned fields of `current` (uid,
 * creationTimestamp, deletionTimestamp, generation, and status on a status-subresource type);
 * generation counts spec changes.
 */
export function prepareReplace(type: ResourceType, current: StoredObject, input: StoredObject): StoredObject {
  checkDeletionFields(current, input);
  const { uid, creationTimestamp, deletionTimestamp, generation } = current.metadata;
  const specChanged = !deepEqual(input.spec, current.spec);
  const metadata = {
    ...input.metadata,
    uid,
    creationTimestamp,
    deletionTimestamp,
    generation: specChanged && generation !== undefined ? generation + 1 : generation,
  };
  const candidate: StoredObject = { ...input, metadata };
  if (type.hasStatusSubresource) {
    candidate.status = current.status;
  }
  return candidate;
}

/** The object `replaceStatus` stores: `current` with the status of `input` (none if it has none). */
export function prepareStatus(current: StoredObject, input: StoredObject): StoredObject {
  return { ...current, status: input.status };
}

/** Whether storing `candidate` would change nothing but the resourceVersion. */
export const isUnchanged = (candidate: StoredObject, current: StoredObject): boolean =>
  deepEqual(
    { ...candidate, metadata: { ...candidate.metadata, resourceVersion: undefined } },
    { ...current, metadata: { ...current.metadata, resourceVersion: undefined } },
  );
