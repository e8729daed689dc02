import type { KubeObject, ResourceType } from '../../crds/resource.js';

/** What a reconciler is asked to converge: one object, by key. Never the event that woke it. */
export interface ReconcileRequest {
  namespace?: string | undefined;
  name: string;
}

/** `requeueAfterMs`: look again after this long even if nothing changes (idle timers, polling). */
export interface ReconcileResult {
  requeueAfterMs?: number;
}

/**
 * A level-based reconciler: reads the whole object (and what it owns) from the store or caches,
 * converges, writes status once. Throwing retries with per-key exponential back-off; throwing a
 * TerminalError records it and does not retry until the object changes.
 */
export interface Reconciler {
  reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult | undefined>;
}

/** A failure that retrying cannot fix (invalid spec, missing reference): no hot retry loop. */
export class TerminalError extends Error {
  override name = 'TerminalError';
}

/** A secondary resource whose changes wake the primary object(s) it maps to. */
export interface WatchSource<T extends KubeObject = KubeObject> {
  type: ResourceType<T>;
  /**
   * Defaults to the controller owner reference of the object's primary kind. A method, so that a
   * `WatchSource<Secret>` fits `watches: WatchSource[]` (method parameters are bivariant); it is only
   * ever called with objects of `type`.
   */
  map?(object: T): ReconcileRequest[];
  /** Every object that matters carries these labels: the shared informer may watch only those. */
  labelSelector?: string;
}

export interface ControllerDefinition<T extends KubeObject = KubeObject> {
  /** Names metrics, logs and the work queue: `agentcomputer`, `organization`. */
  name: string;
  /** The primary resource: every change of one of these enqueues its key. */
  for: ResourceType<T>;
  /** Resources this controller creates and owns (mapped by controller owner references). */
  owns?: readonly ResourceType[];
  /**
   * A label selector every owned object matches (the labels this controller's objects are made
   * with): their informers then list and watch only those, not every Pod or Secret of the cluster.
   */
  ownedSelector?: string;
  /** Other resources that affect the primary, with their mapping. */
  watches?: readonly WatchSource[];
  reconciler: Reconciler;
  /** Parallel reconciles; one key is never reconciled twice at once. Default 2. */
  workers?: number;
}
