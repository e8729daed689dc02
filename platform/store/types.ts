import type { KubeObject, ResourceType } from '../../crds/resource.js';

/** Why a store call failed; mirrors the Kubernetes API's status reasons. */
export type StoreErrorReason =
  'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid' | 'Expired' | 'Forbidden' | 'Unavailable';

/** The one error a store throws; check `reason`, never the message. */
export class StoreError extends Error {
  constructor(
    readonly reason: StoreErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

export const isStoreError = (err: unknown, reason?: StoreErrorReason): err is StoreError =>
  err instanceof StoreError && (reason === undefined || err.reason === reason);

export interface ListOptions {
  /** Omitted on a namespaced type: every namespace. */
  namespace?: string;
  /** Kubernetes label selector syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h`. */
  labelSelector?: string;
}

export interface ListResult<T> {
  items: T[];
  /** Watch from here to see every change after this list. */
  resourceVersion: string;
}

export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  /** Progress without a change: the caller may resume from this resourceVersion. */
  | { type: 'BOOKMARK'; resourceVersion: string };

export interface WatchOptions extends ListOptions {
  /** Events strictly after this version. Too old a version ends the watch with reason Expired. */
  resourceVersion: string;
  signal: AbortSignal;
}

export interface Watch {
  /** Settles when the watch ends: resolves on abort, rejects with a StoreError (Expired: relist). */
  readonly done: Promise<void>;
}

export interface DeleteOptions {
  /** Delete only this incarnation of the object. */
  uid?: string;
  /** Delete only if unchanged since this version. */
  resourceVersion?: string;
}

export interface StatusWriteOptions {
  /** Write only if unchanged since this version (optimistic concurrency). */
  resourceVersion?: string;
}

/**
 * The resource store: what the API server and the operator share. Two implementations (Kubernetes,
 * embedded) pass the same conformance suite (test/contracts/store/).
 *
 * Semantics follow the Kubernetes API: a write that changes something returns the stored object
 * with a new resourceVersion, and one that changes nothing keeps the old version and emits no watch
 * event; `metadata.generation` counts spec changes; on a type with a status subresource, `create`
 * and `replace` ignore status and `replaceStatus` writes nothing but status; `delete` of an object
 * with finalizers only sets `deletionTimestamp`, and the object goes when its last finalizer is
 * removed; removing an object garbage-collects the objects whose owners are all gone.
 *
 * A watch callback that throws ends its watch: `done` rejects with Unavailable, the error as cause.
 */
export interface ResourceStore {
  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined>;
  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<ListResult<T>>;
  /**
   * Refusals (Forbidden, Invalid selector) reject the returned promise; a version too old to resume
   * from is reported later, by `done` rejecting with Expired. Version '0' or '' sends ADDED for every
   * current object first, then live changes.
   */
  watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch>;
  /**
   * Fails with AlreadyExists when the name is taken, NotFound when the namespace does not exist (a
   * cluster; the embedded store has no namespaces to miss). Server-set metadata in `object`
   * (uid, resourceVersion, deletionTimestamp) is ignored.
   */
  create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T>;
  /**
   * Needs `metadata.resourceVersion`; fails with Conflict when it is stale, NotFound when gone.
   * A replace that removes the last finalizer of a deleting object removes it; what it returns
   * then no longer exists.
   */
  replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T>;
  /**
   * Replaces status (only) of the object named by `object.metadata`. Only `options.resourceVersion`
   * is a precondition (Conflict when stale); without it the write is unconditional.
   */
  replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T>;
  /**
   * Returns the object as left (with deletionTimestamp while finalizers remain) or undefined once
   * gone. NotFound when there is no such object; Conflict when a precondition fails.
   */
  delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined>;
  /** Releases connections, timers and locks; calling it twice is harmless. */
  close(): Promise<void>;
}
