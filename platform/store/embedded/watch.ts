import type { KubeObject, ResourceType } from '../../../crds/resource.js';
import type { Selector } from '../selector.js';
import { matchesSelector } from '../selector.js';
import type { WatchEvent } from '../types.js';
import { StoreError } from '../types.js';
import type { StoredObject } from './objects.js';
import { withVersion } from './objects.js';
import { toTyped } from './validate.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, as remembered for watchers. */
export interface ChangeEvent {
  readonly version: number;
  readonly resource: string;
  readonly type: ChangeType;
  /** The object after the change; for DELETED, its last state carrying the deletion's version. */
  readonly object: StoredObject;
  /** MODIFIED: the object before the change, to tell watchers with a selector that it left or joined. */
  readonly previous?: StoredObject | undefined;
}

/**
 * The most recent changes of all types, like etcd's history before compaction. `floor` is the
 * version after which every change is remembered; watching from an older version has missed changes.
 */
export class EventHistory {
  private events: ChangeEvent[] = [];
  private readonly slack: number;

  constructor(
    private readonly limit: number,
    private floor: number,
  ) {
    this.slack = Math.max(1, Math.ceil(limit / 8));
  }

  /** The oldest version a watch can resume from. */
  get oldest(): number {
    return this.floor;
  }

  append(change: ChangeEvent): void {
    this.events.push(change);
    if (this.events.length <= this.limit + this.slack) return;
    const drop = this.events.length - this.limit;
    this.floor = this.events[drop - 1]?.version ?? this.floor;
    this.events = this.events.slice(drop);
  }

  /** The changes after `version`, oldest first; undefined when some of them are no longer remembered. */
  since(version: number): ChangeEvent[] | undefined {
    if (version < this.floor) return undefined;
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.events[mid]?.version ?? Infinity) <= version) low = mid + 1;
      else high = mid;
    }
    return this.events.slice(low);
  }
}

export interface WatchFilter {
  readonly resource: string;
  readonly namespace?: string | undefined;
  readonly selector: Selector;
}

interface Delivery {
  readonly type: ChangeType;
  readonly object: StoredObject;
}

const passes = (filter: WatchFilter, object: StoredObject): boolean =>
  (filter.namespace === undefined || object.metadata.namespace === filter.namespace) &&
  matchesSelector(filter.selector, object.metadata.labels);

/**
 * What a watcher with this filter sees of a change. As in the API server's watch cache, an object that
 * stops matching arrives as DELETED (its previous content, at the change's version) and one that starts
 * matching arrives as ADDED.
 */
export function project(filter: WatchFilter, change: ChangeEvent): Delivery | undefined {
  if (change.resource !== filter.resource) return undefined;
  const now = passes(filter, change.object);
  if (change.type !== 'MODIFIED' || change.previous === undefined) {
    return now ? { type: change.type, object: change.object } : undefined;
  }
  const before = passes(filter, change.previous);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: withVersion(change.previous, change.version) } : undefined;
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve: () => void = () => undefined;
  let reject: (err: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * One watch. Events are queued and delivered in order from a later macrotask (setImmediate), never
 * inside the stack of the write that caused them; a callback that throws ends the watch.
 */
export class Watcher<T extends KubeObject = KubeObject> {
  private readonly outcome = deferred();
  readonly done: Promise<void> = this.outcome.promise;
  private queue: Delivery[] = [];
  private scheduled = false;
  private finished = false;

  constructor(
    private readonly type: ResourceType<T>,
    readonly filter: WatchFilter,
    private readonly onEvent: (event: WatchEvent<T>) => void,
    private readonly onFinish: (watcher: Watcher<T>) => void,
  ) {
    // Callers may attach to `done` late; an Expired rejection must not count as unhandled meanwhile.
    this.done.catch(() => undefined);
  }

  get active(): boolean {
    return !this.finished;
  }

  offer(change: ChangeEvent): void {
    const delivery = this.finished ? undefined : project(this.filter, change);
    if (delivery !== undefined) this.enqueue(delivery);
  }

  offerExisting(object: StoredObject): void {
    if (!this.finished && passes(this.filter, object)) this.enqueue({ type: 'ADDED', object });
  }

  /** Ends the watch normally: `done` resolves, nothing more is delivered. */
  end(): void {
    if (this.finish()) this.outcome.resolve();
  }

  /** Ends the watch with an error: `done` rejects with it. */
  fail(error: StoreError): void {
    if (this.finish()) this.outcome.reject(error);
  }

  private finish(): boolean {
    if (this.finished) return false;
    this.finished = true;
    this.queue = [];
    this.onFinish(this);
    return true;
  }

  private enqueue(delivery: Delivery): void {
    this.queue.push(delivery);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    const batch = this.queue;
    this.queue = [];
    for (const delivery of batch) {
      if (this.finished) return;
      try {
        this.onEvent({ type: delivery.type, object: toTyped(this.type, delivery.object) });
      } catch (err) {
        const error =
          err instanceof StoreError
            ? err
            : new StoreError('Unavailable', 'the watch callback threw', { cause: err });
        this.fail(error);
      }
    }
  }
}
