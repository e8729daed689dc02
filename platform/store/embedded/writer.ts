import { StoreError } from '../types.js';
import type { ObjectFiles } from './disk.js';
import { UncertainWriteError } from './files.js';
import type { ObjectIndex, StoredObject } from './objects.js';
import { describeObject, hasFinalizers, withVersion } from './objects.js';
import { formatTimestamp } from './validate.js';
import type { VersionCounter } from './versions.js';
import type { ChangeEvent } from './watch.js';

export interface WriterParts {
  readonly index: ObjectIndex;
  readonly files: ObjectFiles;
  readonly versions: VersionCounter;
  readonly publish: (change: ChangeEvent) => void;
  readonly now: () => Date;
}

/** The object marked for deletion as the API server does it: deletionTimestamp now, generation bumped. */
export function markDeleting(object: StoredObject, now: Date): StoredObject {
  const { generation } = object.metadata;
  return {
    ...object,
    metadata: {
      ...object.metadata,
      deletionTimestamp: formatTimestamp(now),
      generation: generation !== undefined && generation > 0 ? generation + 1 : generation,
    },
  };
}

/**
 * Commits changes: each one gets the next resourceVersion, is made durable, then becomes visible in
 * the index and to watchers. Also deletion (honouring finalizers) and owner-reference garbage
 * collection. Callers hold the store's write queue.
 */
export class ObjectWriter {
  /** Set when a write failed after it may have reached the disk: memory and disk may now differ. */
  failure: StoreError | undefined;

  constructor(private readonly parts: WriterParts) {}

  /** Stores a created (no `previous`) or changed object. */
  async put(resource: string, candidate: StoredObject, previous?: StoredObject): Promise<StoredObject> {
    const { namespace, name } = candidate.metadata;
    const version = await this.parts.versions.next();
    const stored = withVersion(candidate, version);
    await this.persist(`writing ${describeObject(resource, namespace, name)}`, () =>
      this.parts.files.write(resource, stored),
    );
    this.parts.index.put(resource, stored);
    const type = previous === undefined ? 'ADDED' : 'MODIFIED';
    this.parts.publish({ version, resource, type, object: stored, previous });
    return stored;
  }

  /**
   * Removes `current` and collects what it owned. `last` is its final state for the DELETED event
   * (differs from `current` when an update removed the last finalizer). Returns that final state.
   */
  async remove(resource: string, current: StoredObject, last: StoredObject = current): Promise<StoredObject> {
    const { namespace, name, uid } = current.metadata;
    const version = await this.parts.versions.next();
    await this.persist(`deleting ${describeObject(resource, namespace, name)}`, () =>
      this.parts.files.remove(resource, current),
    );
    this.parts.index.remove(resource, current);
    const final = withVersion(last, version);
    this.parts.publish({ version, resource, type: 'DELETED', object: final });
    if (uid !== undefined) await this.collectDependents(uid);
    return final;
  }

  /** Deletes as the API server does: with finalizers, only marks (once); otherwise removes. */
  async delete(resource: string, current: StoredObject): Promise<StoredObject | undefined> {
    if (!hasFinalizers(current)) {
      await this.remove(resource, current);
      return undefined;
    }
    if (current.metadata.deletionTimestamp !== undefined) return current;
    return this.put(resource, markDeleting(current, this.parts.now()), current);
  }

  /** Deletes `object` right away if every one of its owners is gone (it was created or changed so). */
  async collectIfOrphan(resource: string, object: StoredObject): Promise<void> {
    if (this.isOrphan(object)) await this.delete(resource, object);
  }

  /**
   * Brings a freshly loaded store to the state garbage collection would have reached: a crash may
   * have come between removing an owner and deleting its dependents.
   */
  async sweep(): Promise<void> {
    for (const { object } of this.parts.index.all()) {
      const uid = object.metadata.uid;
      const current = uid === undefined ? undefined : this.parts.index.withUid(uid);
      if (current === undefined) continue; // collected earlier in this sweep
      if (current.object.metadata.deletionTimestamp !== undefined && !hasFinalizers(current.object)) {
        await this.remove(current.resource, current.object);
      } else {
        await this.collectIfOrphan(current.resource, current.object);
      }
    }
  }

  private async collectDependents(ownerUid: string): Promise<void> {
    for (const dependent of this.parts.index.dependentsOf(ownerUid)) {
      const uid = dependent.object.metadata.uid;
      const current = uid === undefined ? undefined : this.parts.index.withUid(uid);
      if (current !== undefined) await this.collectIfOrphan(current.resource, current.object);
    }
  }

  /**
   * Whether all owners are gone. An owner counts when its uid is stored and it is cluster-scoped or
   * in the dependent's namespace (Kubernetes resolves namespaced owners there). A namespaced owner of
   * a cluster-scoped dependent cannot be resolved; Kubernetes then never collects, and neither do we.
   * Objects already being deleted (waiting for finalizers) are left alone.
   */
  private isOrphan(object: StoredObject): boolean {
    const owners = object.metadata.ownerReferences ?? [];
    if (owners.length === 0 || object.metadata.deletionTimestamp !== undefined) return false;
    const namespace = object.metadata.namespace;
    return owners.every((owner) => {
      const found = this.parts.index.withUid(owner.uid);
      if (found === undefined) return true;
      const ownerNamespace = found.object.metadata.namespace;
      return namespace !== undefined && ownerNamespace !== undefined && ownerNamespace !== namespace;
    });
  }

  private async persist(action: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      const error = new StoreError('Unavailable', action, { cause: err });
      if (err instanceof UncertainWriteError) this.failure = error;
      throw error;
    }
  }
}
