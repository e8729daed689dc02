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
 * embedded) pass the same conformance suite (test/contracts/store.contract.ts).
 *
 * Semantics follow the Kubernetes API: every write returns the stored object with a new
 * resourceVersion; `metadata.generation` counts spec changes; on a type with a status subresource,
 * `create` and `replace` ignore status and `replaceStatus` writes nothing but status; `delete` of an
 * object with finalizers only sets `deletionTimestamp`, and the object goes when its last finalizer
 * is removed; removing an object garbage-collects the objects whose owners are all gone.
 */
export interface ResourceStore {
  get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined>;
  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<ListResult<T>>;
  watch<T extends KubeObject>(
    type: ResourceType<T>,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<Watch>;
  /** Fails with AlreadyExists when the name is taken. */
  create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T>;
  /** Needs `metadata.resourceVersion`; fails with Conflict when it is stale, NotFound when gone. */
  replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T>;
  /** Replaces status (only) of the object named by `object.metadata`; Conflict on a stale version. */
  replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T>;
  /** Returns the object as left (with deletionTimestamp while finalizers remain) or undefined once gone. */
  delete<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    options?: DeleteOptions,
  ): Promise<T | undefined>;
  /** Releases connections, timers and locks. */
  close(): Promise<void>;
}
