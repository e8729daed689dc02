import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import { DataDirLock } from './embedded/lock.js';
import { ObjectFiles } from './embedded/disk.js';
import { ensureDirectory } from './embedded/files.js';
import { isUnchanged, prepareCreate, prepareReplace, prepareStatus } from './embedded/mutations.js';
import type { IndexedObject, StoredObject } from './embedded/objects.js';
import { describeObject, hasFinalizers, ObjectIndex, resourceOf } from './embedded/objects.js';
import { checkScope, parseEnvelope, toTyped, validateForStorage } from './embedded/validate.js';
import { parseVersion, VersionCounter } from './embedded/versions.js';
import type { ChangeEvent } from './embedded/watch.js';
import { EventHistory, Watcher } from './embedded/watch.js';
import { ObjectWriter } from './embedded/writer.js';
import { matchesSelector, parseLabelSelector } from './selector.js';
import type {
  DeleteOptions,
  ListOptions,
  ListResult,
  ResourceStore,
  StatusWriteOptions,
  Watch,
  WatchEvent,
  WatchOptions,
} from './types.js';
import { StoreError } from './types.js';

export interface EmbeddedStoreOptions {
  /** The clock for creationTimestamp and deletionTimestamp. */
  now?: () => Date;
  /** How many recent changes are remembered for watches that resume from a version (default 10,000). */
  historyLimit?: number;
}

interface Preconditions {
  uid?: string | undefined;
  resourceVersion?: string | undefined;
}

interface ChangeListener {
  offer(change: ChangeEvent): void;
  end(): void;
}

/** Runs `action` now, as a promise: a synchronous failure becomes a rejection. */
const settle = <R>(action: () => R): Promise<R> =>
  new Promise<R>((resolvePromise) => {
    resolvePromise(action());
  });

function highestVersion(loaded: readonly IndexedObject[]): number {
  let highest = 0;
  for (const { resource, object } of loaded) {
    const { namespace, name, resourceVersion } = object.metadata;
    const version = parseVersion(resourceVersion ?? '');
    if (version === undefined) {
      const where = describeObject(resource, namespace, name);
      throw new StoreError(
        'Unavailable',
        `stored ${where} has a malformed resourceVersion "${resourceVersion ?? ''}"`,
      );
    }
    highest = Math.max(highest, version);
  }
  return highest;
}

/**
 * The resource store on one machine, without a cluster: every object in memory, each persisted as a
 * JSON file (atomically, before the write is acknowledged) under `<dir>/objects`, with the semantics
 * of the Kubernetes API (see ResourceStore and test/contracts/store/).
 *
 * Writes go through one queue. Watch callbacks are called from a later macrotask, in order, never from
 * inside a store call. One process at a time may open a data directory (`<dir>/LOCK`).
 */
export class EmbeddedStore implements ResourceStore {
  private readonly index = new ObjectIndex();
  private readonly history: EventHistory;
  private readonly writer: ObjectWriter;
  private readonly listeners = new Set<ChangeListener>();
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  /**
   * The version of the last change made visible: what list reports. Not the counter, which runs
   * ahead while a write is being persisted (a list then must not claim to include that write).
   */
  private visibleVersion: number;

  private constructor(
    /** The data directory. */
    readonly dir: string,
    private readonly lock: DataDirLock,
    versions: VersionCounter,
    files: ObjectFiles,
    private readonly now: () => Date,
    historyLimit: number,
  ) {
    this.visibleVersion = versions.current;
    this.history = new EventHistory(historyLimit, versions.current);
    this.writer = new ObjectWriter({
      index: this.index,
      files,
      versions,
      now,
      publish: (change) => {
        this.publish(change);
      },
    });
  }

  /** Opens (creating if needed) the store in `dir`, taking its lock; fails with Unavailable if it is in use. */
  static async open(dir: string, options: EmbeddedStoreOptions = {}): Promise<EmbeddedStore> {
    const root = resolve(dir);
    try {
      await ensureDirectory(root);
    } catch (err) {
      throw new StoreError('Unavailable', `creating data directory ${root}`, { cause: err });
    }
    const lock = await DataDirLock.acquire(root);
    try {
      const files = new ObjectFiles(join(root, 'objects'));
      const loaded = await files.load();
      const versions = await VersionCounter.open(root, highestVersion(loaded));
      const now = options.now ?? (() => new Date());
      const store = new EmbeddedStore(root, lock, versions, files, now, options.historyLimit ?? 10_000);
      for (const { resource, object } of loaded) store.index.put(resource, object);
      await store.writer.sweep();
      return store;
    } catch (err) {
      await lock.release().catch(() => undefined);
      if (err instanceof StoreError) throw err;
      throw new StoreError('Unavailable', `opening the embedded store in ${root}`, { cause: err });
    }
  }

  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    return settle(() => {
      this.ensureUsable();
      checkScope(type, namespace);
      const found = this.index.get(resourceOf(type), namespace, name);
      return found === undefined ? undefined : toTyped(type, found);
    });
  }

  list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<ListResult<T>> {
    return settle(() => {
      this.ensureUsable();
      if (options.namespace !== undefined) checkScope(type, options.namespace);
      const selector = parseLabelSelector(options.labelSelector ?? '');
      const items = this.index
        .list(resourceOf(type), options.namespace)
        .filter((object) => matchesSelector(selector, object.metadata.labels))
        .map((object) => toTyped(type, object));
      return { items, resourceVersion: String(this.visibleVersion) };
    });
  }

  watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch> {
    return settle(() => this.startWatch(type, options, onEvent));
  }

  private startWatch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Watch {
    this.ensureUsable();
    const { namespace, signal } = options;
    if (namespace !== undefined) checkScope(type, namespace);
    const filter = {
      resource: resourceOf(type),
      namespace,
      selector: parseLabelSelector(options.labelSelector ?? ''),
    };
    const from = this.watchStart(options.resourceVersion);
    const watcher = new Watcher(type, filter, onEvent, (finished) => {
      this.listeners.delete(finished);
      signal.removeEventListener('abort', onAbort);
    });
    const onAbort = (): void => {
      watcher.end();
    };
    if (signal.aborted) {
      watcher.end();
      return { done: watcher.done };
    }
    const missed = from === undefined ? [] : this.history.since(from);
    if (missed === undefined) {
      watcher.fail(
        new StoreError(
          'Expired',
          `too old resource version: ${from ?? ''} (the oldest this store can resume from is ${this.history.oldest})`,
        ),
      );
      return { done: watcher.done };
    }
    if (from === undefined) {
      for (const object of this.index.list(filter.resource, namespace)) watcher.offerExisting(object);
    }
    for (const change of missed) watcher.offer(change);
    this.listeners.add(watcher);
    signal.addEventListener('abort', onAbort, { once: true });
    return { done: watcher.done };
  }

  async create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.ensureUsable();
    const input = parseEnvelope(type, object);
    const resource = resourceOf(type);
    return this.exclusive(async () => {
      const { namespace, name } = input.metadata;
      if (this.index.get(resource, namespace, name) !== undefined) {
        throw new StoreError(
          'AlreadyExists',
          `${type.kind} ${describeObject(resource, namespace, name)} already exists`,
        );
      }
      const candidate = validateForStorage(type, prepareCreate(type, input, randomUUID(), this.now()));
      const stored = await this.writer.put(resource, candidate);
      await this.writer.collectIfOrphan(resource, stored);
      return toTyped(type, stored);
    });
  }

  async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.ensureUsable();
    const input = parseEnvelope(type, object);
    const { namespace, name, resourceVersion } = input.metadata;
    if (resourceVersion === undefined || resourceVersion === '') {
      throw new StoreError(
        'Invalid',
        `${type.kind} "${name}" is invalid: metadata.resourceVersion must be specified for an update`,
      );
    }
    if (parseVersion(resourceVersion) === undefined) {
      throw new StoreError(
        'Invalid',
        `${type.kind} "${name}" is invalid: metadata.resourceVersion "${resourceVersion}" is malformed`,
      );
    }
    const resource = resourceOf(type);
    return this.exclusive(async () => {
      const current = this.require(type, namespace, name);
      this.checkPreconditions(type, current, { uid: input.metadata.uid, resourceVersion });
      const candidate = validateForStorage(type, prepareReplace(type, current, input));
      if (isUnchanged(candidate, current)) return toTyped(type, current);
      if (current.metadata.deletionTimestamp !== undefined && !hasFinalizers(candidate)) {
        return toTyped(type, await this.writer.remove(resource, current, candidate));
      }
      const stored = await this.writer.put(resource, candidate, current);
      await this.writer.collectIfOrphan(resource, stored);
      return toTyped(type, stored);
    });
  }

  async replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options: StatusWriteOptions = {},
  ): Promise<T> {
    this.ensureUsable();
    if (!type.hasStatusSubresource) {
      throw new StoreError('Invalid', `${type.kind} has no status subresource: write status with replace`);
    }
    const input = parseEnvelope(type, object);
    const { namespace, name } = input.metadata;
    return this.exclusive(async () => {
      const current = this.require(type, namespace, name);
      this.checkPreconditions(type, current, {
        uid: input.metadata.uid,
        resourceVersion: options.resourceVersion,
      });
      const candidate = validateForStorage(type, prepareStatus(current, input));
      if (isUnchanged(candidate, current)) return toTyped(type, current);
      return toTyped(type, await this.writer.put(resourceOf(type), candidate, current));
    });
  }

  async delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): Promise<T | undefined> {
    this.ensureUsable();
    checkScope(type, namespace);
    return this.exclusive(async () => {
      const current = this.require(type, namespace, name);
      this.checkPreconditions(type, current, options);
      const kept = await this.writer.delete(resourceOf(type), current);
      return kept === undefined ? undefined : toTyped(type, kept);
    });
  }

  /** Waits for queued writes, ends every watch (done resolves) and releases the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    for (const listener of [...this.listeners]) listener.end();
    try {
      await this.lock.release();
    } catch (err) {
      throw new StoreError('Unavailable', `releasing the lock of ${this.dir}`, { cause: err });
    }
  }

  private publish(change: ChangeEvent): void {
    this.visibleVersion = change.version;
    this.history.append(change);
    for (const listener of this.listeners) listener.offer(change);
  }

  /** undefined: start now with the current objects ("0" or ""); otherwise the version to resume after. */
  private watchStart(resourceVersion: string): number | undefined {
    if (resourceVersion === '' || resourceVersion === '0') return undefined;
    const version = parseVersion(resourceVersion);
    if (version === undefined)
      throw new StoreError('Invalid', `watch: malformed resourceVersion "${resourceVersion}"`);
    return version;
  }

  private require(type: ResourceType, namespace: string | undefined, name: string): StoredObject {
    const current = this.index.get(resourceOf(type), namespace, name);
    if (current === undefined) {
      throw new StoreError(
        'NotFound',
        `${type.kind} ${describeObject(resourceOf(type), namespace, name)} not found`,
      );
    }
    return current;
  }

  private checkPreconditions(type: ResourceType, current: StoredObject, expected: Preconditions): void {
    const { namespace, name, uid, resourceVersion } = current.metadata;
    const subject = `${type.kind} ${describeObject(resourceOf(type), namespace, name)}`;
    if (expected.uid !== undefined && expected.uid !== '' && expected.uid !== uid) {
      throw new StoreError(
        'Conflict',
        `${subject}: precondition failed: uid ${expected.uid}, stored uid ${uid ?? ''}`,
      );
    }
    if (expected.resourceVersion !== undefined && expected.resourceVersion !== resourceVersion) {
      throw new StoreError(
        'Conflict',
        `${subject} has been modified (resourceVersion ${resourceVersion ?? ''}, not ${expected.resourceVersion}); read it again and retry`,
      );
    }
  }

  private ensureUsable(): void {
    if (this.closed) throw new StoreError('Unavailable', `the embedded store in ${this.dir} is closed`);
    const failure = this.writer.failure;
    if (failure !== undefined) {
      throw new StoreError(
        'Unavailable',
        `the embedded store in ${this.dir} failed a write and must be reopened`,
        {
          cause: failure,
        },
      );
    }
  }

  /** Runs `action` after every earlier write: one write at a time keeps versions and files consistent. */
  private exclusive<R>(action: () => Promise<R>): Promise<R> {
    const run = this.tail.then(() => {
      if (this.writer.failure !== undefined) this.ensureUsable();
      return action();
    });
    this.tail = run.catch(() => undefined);
    return run;
  }
}
