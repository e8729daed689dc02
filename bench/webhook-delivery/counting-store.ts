// A store that counts the controller's status writes and their conflicts, by kind.
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { isStoreError } from '../../platform/store/types.js';
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  ResourceStore,
  StatusWriteOptions,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../../platform/store/types.js';

export class CountingStore implements ResourceStore {
  readonly writes = new Map<string, number>();
  readonly conflicts = new Map<string, number>();

  constructor(private readonly inner: ResourceStore) {}

  reset(): void {
    this.writes.clear();
    this.conflicts.clear();
  }

  get<T extends KubeObject>(type: ResourceType<T>, namespace: string | undefined, name: string) {
    return this.inner.get(type, namespace, name);
  }

  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<ListResult<T>> {
    return this.inner.list(type, options);
  }

  watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch> {
    return this.inner.watch(type, options, onEvent);
  }

  create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.inner.create(type, object);
  }

  replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    return this.inner.replace(type, object);
  }

  async replaceStatus<T extends KubeObject>(
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

  delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.inner.delete(type, namespace, name, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
