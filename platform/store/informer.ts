import type { KubeObject, ResourceType } from '../../crds/resource.js';
import type { Logger } from '../log.js';
import { isStoreError } from './types.js';
import type { ListOptions, ResourceStore, WatchEvent } from './types.js';

export type InformerEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T };

export interface InformerOptions<T> extends ListOptions {
  logger: Logger;
  /** Called after the cache changed, in order; also for every object of a relist. */
  onEvent?: (event: InformerEvent<T>) => void;
  /** Back-off after a broken watch: starts here and doubles to maxBackoffMs. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** Compares resourceVersions where both are numbers (etcd's and the embedded store's are); else unknown. */
function isOlder(candidate: string | undefined, current: string | undefined): boolean {
  if (candidate === undefined || current === undefined) return false;
  if (!/^\d+$/.test(candidate) || !/^\d+$/.test(current)) return false;
  return BigInt(candidate) < BigInt(current);
}

/**
 * A local cache of one resource type kept current by list + watch: what the API serves reads from
 * and what controllers wake on. It never gives up: a broken watch resumes from the last version it
 * saw, an expired version relists (emitting what changed meanwhile), with exponential back-off.
 */
export class Informer<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly abort = new AbortController();
  private lastVersion = '';
  private synced: Promise<void> | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: ResourceStore,
    private readonly type: ResourceType<T>,
    private readonly options: InformerOptions<T>,
  ) {}

  /** Lists, starts watching, and resolves once the cache holds the listed state. */
  start(): Promise<void> {
    this.synced ??= this.relist().then(() => {
      this.loop = this.watchForever();
    });
    return this.synced;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }

  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((object) => object.metadata.namespace === namespace);
  }

  /** Records an object this process just wrote, so its own reads see the write at once. */
  observe(object: T, deleted = false): void {
    const known = this.objects.get(keyOf(object));
    if (known !== undefined && isOlder(object.metadata.resourceVersion, known.metadata.resourceVersion))
      return;
    if (deleted) this.objects.delete(keyOf(object));
    else this.objects.set(keyOf(object), object);
  }

  private stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.store.list(this.type, this.listOptions());
    const seen = new Set<string>();
    for (const item of items) {
      seen.add(keyOf(item));
      const before = this.objects.get(keyOf(item));
      this.objects.set(keyOf(item), item);
      if (before?.metadata.resourceVersion !== item.metadata.resourceVersion) {
        this.options.onEvent?.({ type: before === undefined ? 'ADDED' : 'MODIFIED', object: item });
      }
    }
    for (const [key, object] of this.objects) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      this.options.onEvent?.({ type: 'DELETED', object });
    }
    this.lastVersion = resourceVersion;
  }

  private listOptions(): ListOptions {
    return { namespace: this.options.namespace, labelSelector: this.options.labelSelector };
  }

  private async watchForever(): Promise<void> {
    const initial = this.options.initialBackoffMs ?? 100;
    let backoff = initial;
    while (!this.abort.signal.aborted) {
      try {
        const watch = await this.store.watch(
          this.type,
          { ...this.listOptions(), resourceVersion: this.lastVersion, signal: this.abort.signal },
          (event) => {
            backoff = initial;
            this.apply(event);
          },
        );
        await watch.done;
      } catch (err) {
        if (this.stopped()) return;
        backoff = await this.recover(err, backoff);
      }
    }
  }

  private async recover(err: unknown, backoff: number): Promise<number> {
    const expired = isStoreError(err, 'Expired');
    this.options.logger.warn({ err, kind: this.type.kind, expired }, 'watch ended; resuming');
    await sleep(backoff, this.abort.signal);
    if (expired) {
      try {
        await this.relist();
      } catch (relistErr) {
        this.options.logger.warn({ err: relistErr, kind: this.type.kind }, 'relist failed');
      }
    }
    return Math.min(backoff * 2, this.options.maxBackoffMs ?? 10_000);
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'BOOKMARK') {
      this.lastVersion = event.resourceVersion;
      return;
    }
    const { object } = event;
    this.lastVersion = object.metadata.resourceVersion ?? this.lastVersion;
    if (event.type === 'DELETED') this.objects.delete(keyOf(object));
    else this.objects.set(keyOf(object), object);
    this.options.onEvent?.({ type: event.type, object });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
