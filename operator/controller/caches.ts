import { apiVersionOf } from '../../crds/resource.js';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { Informer } from '../../platform/store/informer.js';
import { ValueIndex } from './cache-index.js';
import type { CacheIndex } from './cache-index.js';
import type { InformerEvent } from '../../platform/store/informer.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';

/**
 * Read access to the manager's informer caches: what reconcilers read instead of the store (no round
 * trip, and the same view that woke them). A cache lags the store by a watch event; after writing,
 * a reconciler records its write with `observe` so its next read does not see the old object.
 */
export interface Caches {
  /** Throws when no controller watches `type` and it was not added with `ControllerManager.cache`. */
  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): T | undefined;
  list<T extends KubeObject>(type: ResourceType<T>, namespace?: string): T[];
  observe<T extends KubeObject>(type: ResourceType<T>, object: T, deleted?: boolean): void;
}

/**
 * Where one object is read: a cache (no round trip) or the store (a quorum read); both fit. Code
 * that reconcilers and their tests share takes this, so the operator passes its caches.
 */
export interface ObjectReader {
  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): T | undefined | Promise<T | undefined>;
}

type Handler<T> = (event: InformerEvent<T>) => void;

interface Entry<T extends KubeObject> {
  type: ResourceType<T>;
  /** Made by `start`, with the label selector every registration agreed on. */
  informer: Informer<T> | undefined;
  handlers: Handler<T>[];
  indexes: Map<string, ValueIndex<T>>;
  /** What each registration asked to see: a label selector, or undefined for every object. */
  selections: (string | undefined)[];
}

/**
 * The label selector an informer shared by several registrations may use: theirs when they all ask
 * for the same one, else none (every object), so that no registration misses an object it wanted.
 */
function commonSelector(selections: readonly (string | undefined)[]): string | undefined {
  const [first] = selections;
  return selections.every((selection) => selection === first) ? first : undefined;
}

const typeKey = (type: ResourceType): string => `${apiVersionOf(type)}/${type.kind}`;

/**
 * One informer per resource type, however many controllers watch it, with its events fanned out to
 * every handler. Handlers are added before `start`: the start's list then reaches each of them.
 */
export class SharedInformers implements Caches {
  private readonly entries = new Map<string, Entry<KubeObject>>();
  private started = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Ensures an informer for `type`; with `handler`, calls it for every change. `labelSelector`: the
   * objects it needs all carry these labels (Agentry's own), so the informer may list and watch only
   * those, unless another registration of `type` asks for more.
   */
  register<T extends KubeObject>(type: ResourceType<T>, handler?: Handler<T>, labelSelector?: string): void {
    const entry = this.entry(type) ?? this.create(type);
    entry.selections.push(labelSelector);
    if (handler !== undefined) entry.handlers.push(handler);
  }

  /**
   * An index of `type`'s cache by `valueOf` (undefined: not indexed), named so that controllers
   * asking for the same one share it; before `start`, so that the start's list fills it.
   */
  index<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    valueOf: (object: T) => string | undefined,
  ): CacheIndex<T> {
    if (this.started)
      throw new Error(`cannot add the ${name} index of ${type.kind} after the caches started`);
    const entry = this.entry(type) ?? this.create(type);
    const known = entry.indexes.get(name);
    if (known !== undefined) return known;
    const index = new ValueIndex(valueOf, (namespace, objectName) =>
      entry.informer?.get(namespace, objectName),
    );
    entry.indexes.set(name, index);
    // First, so that every handler after it (a controller's enqueue) finds it current.
    entry.handlers.unshift((event) => {
      index.apply(event);
    });
    return index;
  }

  /** Lists every type and starts watching; resolves once all caches hold the listed state. */
  async start(): Promise<void> {
    this.started = true;
    const informers = [...this.entries.values()].map((entry) => (entry.informer = this.informerOf(entry)));
    await Promise.all(informers.map((informer) => informer.start()));
  }

  async stop(): Promise<void> {
    const informers = [...this.entries.values()].flatMap((entry) => entry.informer ?? []);
    await Promise.all(informers.map((informer) => informer.stop()));
  }

  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): T | undefined {
    return this.require(type).informer?.get(namespace, name);
  }

  list<T extends KubeObject>(type: ResourceType<T>, namespace?: string): T[] {
    return this.require(type).informer?.list(namespace) ?? [];
  }

  observe<T extends KubeObject>(type: ResourceType<T>, object: T, deleted = false): void {
    this.require(type).informer?.observe(object, deleted);
  }

  private create<T extends KubeObject>(type: ResourceType<T>): Entry<T> {
    if (this.started) {
      throw new Error(`cannot add an informer for ${type.kind} after the caches started`);
    }
    const entry: Entry<T> = { type, informer: undefined, handlers: [], indexes: new Map(), selections: [] };
    // Entry<T> is not assignable to Entry<KubeObject> (handlers are contravariant); `entry()` below
    // only hands it back for this very type descriptor.
    this.entries.set(typeKey(type), entry as unknown as Entry<KubeObject>);
    return entry;
  }

  private informerOf<T extends KubeObject>(entry: Entry<T>): Informer<T> {
    const { type, handlers } = entry;
    const labelSelector = commonSelector(entry.selections);
    if (labelSelector === undefined && entry.selections.some((selection) => selection !== undefined))
      this.logger.info({ kind: type.kind }, 'caching every object of this kind: a controller needs them all');
    return new Informer(this.store, type, {
      logger: this.logger,
      labelSelector,
      onEvent: (event) => {
        for (const handler of handlers) this.dispatch(type, handler, event);
      },
    });
  }

  private entry<T extends KubeObject>(type: ResourceType<T>): Entry<T> | undefined {
    const entry = this.entries.get(typeKey(type));
    if (entry === undefined) return undefined;
    if (entry.type !== type) {
      throw new Error(`two different descriptors of ${typeKey(type)}: use one ResourceType object per kind`);
    }
    return entry as unknown as Entry<T>; // the same descriptor created it, so it holds T
  }

  private require<T extends KubeObject>(type: ResourceType<T>): Entry<T> {
    const entry = this.entry(type);
    if (entry === undefined) {
      throw new Error(`no cache of ${type.kind}: watch it in a controller or add it with manager.cache()`);
    }
    return entry;
  }

  /** A handler that throws would end the informer's watch; log it and carry on instead. */
  private dispatch<T extends KubeObject>(
    type: ResourceType<T>,
    handler: Handler<T>,
    event: InformerEvent<T>,
  ): void {
    try {
      handler(event);
    } catch (err) {
      const { namespace, name } = event.object.metadata;
      this.logger.error({ err, kind: type.kind, namespace, name }, 'informer event handler failed');
    }
  }
}
