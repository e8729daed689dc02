// A store that counts the controller's status writes and their conflicts, by kind.
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { isStoreError } from '../../platform/store/types.js';
import type { StatusWriteOptions } from '../../platform/store/types.js';
import { DelegatingStore } from '../../test/support/delegating-store.js';

export class CountingStore extends DelegatingStore {
  readonly writes = new Map<string, number>();
  readonly conflicts = new Map<string, number>();

  reset(): void {
    this.writes.clear();
    this.conflicts.clear();
  }

  override async replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    try {
      const written = await this.inner.replaceStatus(type, object, options);
      this.writes.set(type.kind, (this.writes.get(type.kind) ?? 0) + 1);
      return written;
    } catch (err) {
      if (isStoreError(err, 'Conflict'))
        this.conflicts.set(type.kind, (this.conflicts.get(type.kind) ?? 0) + 1);
      throw err;
    }
  }
}
