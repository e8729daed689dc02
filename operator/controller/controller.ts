import { apiVersionOf } from '../../crds/resource.js';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { SharedInformers } from './caches.js';
import type { ControllerMetrics, ReconcileOutcome } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { RateLimiter } from './rate-limiter.js';
import { TerminalError } from './types.js';
import type { ControllerDefinition, ReconcileRequest, WatchSource } from './types.js';

export interface ControllerOptions {
  informers: SharedInformers;
  metrics: ControllerMetrics;
  logger: Logger;
  /** Default: client-go's (5 ms doubling to 5 min per key, 10 qps / burst 100 overall). */
  rateLimiter?: RateLimiter;
}

/**
 * Conflicts in a row that retry quietly (debug log, no error counted): one is a cache a watch event
 * behind; a run of them is two writers fighting, and shows as a failed reconcile.
 */
const QUIET_CONFLICTS = 3;

/** The queue key of an object: `namespace/name`, or `/name` for a cluster-scoped one. */
export const requestKey = (request: ReconcileRequest): string => `${request.namespace ?? ''}/${request.name}`;

export function parseRequestKey(key: string): ReconcileRequest {
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  return { namespace: namespace === '' ? undefined : namespace, name: key.slice(slash + 1) };
}

/** Maps an owned object to its controlling owner of the primary kind, as controller-runtime's Owns. */
export function controllerOwnerOf(primary: ResourceType, object: KubeObject): ReconcileRequest[] {
  const apiVersion = apiVersionOf(primary);
  const owner = object.metadata.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === primary.kind && ref.apiVersion === apiVersion,
  );
  if (owner === undefined) return [];
  // Owner references never cross namespaces: a namespaced owner lives beside what it owns.
  return [{ namespace: primary.namespaced ? object.metadata.namespace : undefined, name: owner.name }];
}

/**
 * Runs one controller: every change of its primary, owned or watched objects enqueues the key of the
 * primary object it concerns; `workers` workers take keys from the queue and reconcile them, one
 * worker per key at a time. Failures retry with back-off, TerminalErrors wait for the next change,
 * `requeueAfterMs` looks again later. Informers belong to the manager (shared between controllers).
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly queue: WorkQueue;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];

  constructor(
    private readonly definition: ControllerDefinition<T>,
    private readonly options: ControllerOptions,
  ) {
    this.name = definition.name;
    this.logger = options.logger.child({ controller: definition.name });
    this.queue = new WorkQueue({
      metrics: options.metrics.queue(definition.name),
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    });
    this.registerSources();
  }

  /** Starts the workers; keys queued before (the caches' initial list) are reconciled first. */
  start(): void {
    if (this.workers.length > 0 || this.queue.isShuttingDown) return;
    const count = Math.max(1, this.definition.workers ?? 2);
    for (let i = 0; i < count; i++) this.workers.push(this.work());
    this.logger.info({ workers: count }, 'controller started');
  }

  /**
   * Stops taking keys and waits for reconciles in flight; after `graceMs` their signals are aborted
   * (a reconciler that ignores its signal still delays the stop until it returns).
   */
  async stop(graceMs: number): Promise<void> {
    const drained = this.queue.shutdown();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>((resolve) => {
      timer = setTimeout(resolve, graceMs, 'grace-over');
    });
    const first = await Promise.race([drained.then(() => 'drained' as const), graceOver]);
    clearTimeout(timer);
    if (first === 'grace-over') {
      this.logger.warn({ graceMs }, 'reconciles still running after the grace period; aborting them');
    }
    this.abort.abort(new Error(`controller ${this.name} is stopping`));
    await drained;
    await Promise.all(this.workers);
    this.logger.info('controller stopped');
  }

  /** Enqueues a key by hand (tests, or a reconciler waking another object). */
  enqueue(request: ReconcileRequest): void {
    this.queue.add(requestKey(request));
  }

  private registerSources(): void {
    const { informers } = this.options;
    const primary = this.definition.for;
    informers.register(primary, ({ object }) => {
      this.enqueueAll([{ namespace: object.metadata.namespace, name: object.metadata.name }]);
    });
    for (const owned of this.definition.owns ?? []) {
      informers.register(
        owned,
        ({ object }) => {
          this.enqueueAll(controllerOwnerOf(primary, object));
        },
        this.definition.ownedSelector,
      );
    }
    for (const source of this.definition.watches ?? []) this.registerWatch(source);
  }

  private registerWatch<W extends KubeObject>(source: WatchSource<W>): void {
    this.options.informers.register(
      source.type,
      ({ object }) => {
        this.enqueueAll(
          source.map === undefined ? controllerOwnerOf(this.definition.for, object) : source.map(object),
        );
      },
      source.labelSelector,
    );
  }

  private enqueueAll(requests: readonly ReconcileRequest[]): void {
    for (const request of requests) this.queue.add(requestKey(request));
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcile(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcile(key: string): Promise<void> {
    const request = parseRequestKey(key);
    const started = performance.now();
    let outcome: ReconcileOutcome;
    try {
      const result = await this.definition.reconciler.reconcile(request, this.abort.signal);
      this.queue.forget(key);
      const after = result?.requeueAfterMs;
      outcome = after !== undefined && after > 0 ? 'requeue' : 'success';
      if (after !== undefined && after > 0) this.queue.addAfter(key, after);
    } catch (err) {
      outcome = this.failed(key, request, err);
    }
    const seconds = (performance.now() - started) / 1000;
    this.options.metrics.duration.labels(this.name, outcome).observe(seconds);
  }

  private failed(key: string, request: ReconcileRequest, err: unknown): ReconcileOutcome {
    const context = { namespace: request.namespace, name: request.name, err };
    if (this.abort.signal.aborted) {
      // Interrupted by shutdown, not a fault of the object: the next start reconciles it again.
      this.logger.info(context, 'reconcile aborted by shutdown');
      return 'error';
    }
    if (isStoreError(err, 'Conflict') && this.queue.retries(key) < QUIET_CONFLICTS) {
      // A write over a version the cache had not replaced yet (reads come from caches): the watch
      // brings the new one, and the next pass converges from it. Only a run of them is a fault.
      this.queue.addRateLimited(key);
      this.logger.debug(context, 'wrote over an outdated version; reconciling again');
      return 'requeue';
    }
    this.options.metrics.errors.labels(this.name).inc();
    if (err instanceof TerminalError) {
      this.queue.forget(key);
      this.logger.error(context, 'reconcile failed terminally; waiting for the object to change');
      return 'terminal';
    }
    const retries = this.queue.retries(key);
    this.queue.addRateLimited(key);
    this.logger.warn({ ...context, retries }, 'reconcile failed; retrying with back-off');
    return 'error';
  }
}
