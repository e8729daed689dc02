// A store that hands every call to another store: test and bench stores extend it and override
// only the calls they observe or filter.
import type { KubeObject, ResourceType } from '../../crds/resource.js';
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

export class DelegatingStore implements ResourceStore {
  constructor(protected readonly inner: ResourceStore) {}

  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
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

  replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    return this.inner.replaceStatus(type, object, options);
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
