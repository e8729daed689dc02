// A store that shows an operator under test only its own test's namespaces and Organizations: the
// cluster is shared by every test file, some of which drive runtimes by hand on AgentComputers of
// their own.
import { NamespaceType, OrganizationType } from '../../crds/index.js';
import type { KubeObject, ResourceType } from '../../crds/index.js';
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
import { DelegatingStore } from '../support/delegating-store.js';

/** What an operator under test may see: namespaced objects in `namespaces`, these Organizations. */
export interface OperatorScope {
  namespaces: ReadonlySet<string>;
  organizations: ReadonlySet<string>;
}

/**
 * A store whose lists and watches show only the objects in a scope, as an operator deployed for
 * those namespaces would see; reads by name and writes pass through. It records every write but
 * those to Leases (leader election), so a test can tell which operator acted.
 */
export class ScopedStore extends DelegatingStore {
  /** `verb Kind namespace/name` of each write made through this store, Leases excepted. */
  readonly writes: string[] = [];

  constructor(
    inner: ResourceStore,
    private readonly scope: OperatorScope,
  ) {
    super(inner);
  }

  override async list<T extends KubeObject>(
    type: ResourceType<T>,
    options?: ListOptions,
  ): Promise<ListResult<T>> {
    const result = await this.inner.list(type, options);
    return { ...result, items: result.items.filter((object) => this.inScope(type, object)) };
  }

  override watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch> {
    return this.inner.watch(type, options, (event) => {
      if (event.type === 'BOOKMARK' || this.inScope(type, event.object)) onEvent(event);
    });
  }

  override create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.record('create', type, object.metadata.namespace, object.metadata.name);
    return this.inner.create(type, object);
  }

  override replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.record('replace', type, object.metadata.namespace, object.metadata.name);
    return this.inner.replace(type, object);
  }

  override replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    this.record('replaceStatus', type, object.metadata.namespace, object.metadata.name);
    return this.inner.replaceStatus(type, object, options);
  }

  override delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined> {
    this.record('delete', type, namespace, name);
    return this.inner.delete(type, namespace, name, options);
  }

  private inScope(type: ResourceType, object: KubeObject): boolean {
    const { namespace, name } = object.metadata;
    if (type.namespaced) return this.scope.namespaces.has(namespace ?? '');
    if (type.kind === OrganizationType.kind) return this.scope.organizations.has(name);
    if (type.kind === NamespaceType.kind) return this.scope.namespaces.has(name);
    return true;
  }

  private record(verb: string, type: ResourceType, namespace: string | undefined, name: string): void {
    if (type.kind !== 'Lease') this.writes.push(`${verb} ${type.kind} ${namespace ?? ''}/${name}`);
  }
}
