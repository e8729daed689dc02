import type { Registry } from 'prom-client';
import type { KubeObject, ResourceType } from '../../crds/resource.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { SharedInformers } from './caches.js';
import type { Caches } from './caches.js';
import type { CacheIndex } from './cache-index.js';
import { Controller } from './controller.js';
import { LeaderElector } from './leader-election.js';
import type { LeaderElectionConfig } from './leader-election.js';
import { ControllerMetrics } from './metrics.js';
import type { RateLimiter } from './rate-limiter.js';
import type { ControllerDefinition } from './types.js';

export interface ControllerManagerOptions {
  store: ResourceStore;
  logger: Logger;
  registry: Registry;
  /** Without it every replica reconciles: run one replica only. */
  leaderElection?: LeaderElectionConfig;
  /** How long `stop` lets reconciles in flight finish before aborting their signals. Default 10 s. */
  gracePeriodMs?: number;
  /** A rate limiter per controller; default client-go's (5 ms doubling to 5 min, 10 qps / burst 100). */
  rateLimiter?: () => RateLimiter;
}

/** Why the manager stopped: asked to, lost its lease (the process should exit), or `kill` (tests). */
export type ManagerExit = 'stopped' | 'lost-leadership' | 'killed';

type State = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * Runs controllers over shared informers: one informer per resource type, however many controllers
 * watch it. `start` fills the caches, then (as leader, with leader election) starts every controller's
 * workers. `done` settles when it stops running; on 'lost-leadership' the process should exit, as
 * controller-runtime's does, since another replica is about to take over.
 */
export class ControllerManager {
  /** What reconcilers read: the informers' caches (see Caches). */
  readonly caches: Caches;
  /** Settles once the manager has stopped, with the reason. */
  readonly done: Promise<ManagerExit>;
  private readonly informers: SharedInformers;
  private readonly metrics: ControllerMetrics;
  private readonly controllers: Controller[] = [];
  private readonly elector: LeaderElector | undefined;
  private readonly logger: Logger;
  private state: State = 'new';
  private stopping: Promise<void> | undefined;
  private exit: (reason: ManagerExit) => void = () => undefined;

  constructor(private readonly options: ControllerManagerOptions) {
    this.logger = options.logger;
    this.informers = new SharedInformers(options.store, options.logger);
    this.caches = this.informers;
    this.metrics = new ControllerMetrics(options.registry);
    this.done = new Promise((resolve) => {
      this.exit = resolve;
    });
    const election = options.leaderElection;
    if (election !== undefined) {
      const leader = this.metrics.leader.labels(election.name);
      leader.set(0);
      this.elector = new LeaderElector({
        ...election,
        store: options.store,
        logger: options.logger,
        onStartedLeading: () => {
          this.startControllers();
        },
        onStoppedLeading: () => {
          void this.shutDown('lost-leadership', 0, false);
        },
        onStatus: (leading) => {
          leader.set(leading ? 1 : 0);
        },
      });
    }
  }

  /** This process's leader election identity, if leader election is configured. */
  get identity(): string | undefined {
    return this.elector?.identity;
  }

  /** Whether the workers run: the lease is held, or there is no leader election and it started. */
  get isLeader(): boolean {
    return this.elector === undefined ? this.state === 'running' : this.elector.isLeader;
  }

  /** Adds a controller; before `start` only. */
  add<T extends KubeObject>(definition: ControllerDefinition<T>): Controller<T> {
    this.assertNew(`add controller ${definition.name}`);
    if (this.controllers.some((c) => c.name === definition.name)) {
      throw new Error(`a controller named ${definition.name} is already added`);
    }
    const controller = new Controller(definition, {
      informers: this.informers,
      metrics: this.metrics,
      logger: this.logger,
      ...(this.options.rateLimiter === undefined ? {} : { rateLimiter: this.options.rateLimiter() }),
    });
    this.controllers.push(controller);
    return controller;
  }

  /** Caches `type` for reconcilers that read it without watching it; before `start` only. */
  cache<T extends KubeObject>(type: ResourceType<T>): void {
    this.assertNew(`add a cache of ${type.kind}`);
    this.informers.register(type);
  }

  /**
   * An index of `type`'s cache by `valueOf`, shared by name (see SharedInformers.index); before
   * `start` only. Reconcilers look up by it instead of scanning or listing the store.
   */
  index<T extends KubeObject>(
    type: ResourceType<T>,
    name: string,
    valueOf: (object: T) => string | undefined,
  ): CacheIndex<T> {
    this.assertNew(`add the ${name} index of ${type.kind}`);
    return this.informers.index(type, name, valueOf);
  }

  /**
   * Fills every cache, then starts the controllers, or, with leader election, starts campaigning and
   * starts them once leading. Resolves when the caches are filled, not when leading. Fails if the
   * first list fails; the process should then exit (and be restarted).
   */
  async start(): Promise<void> {
    this.assertNew('start twice');
    this.state = 'starting';
    await this.informers.start();
    this.state = 'running';
    this.logger.info({ controllers: this.controllers.map((c) => c.name) }, 'caches synced');
    if (this.elector === undefined) this.startControllers();
    else this.elector.start();
  }

  /**
   * Graceful stop: controllers stop taking keys and finish what is in flight (aborted after the grace
   * period), then the lease is released so a successor takes over at once, then the informers stop.
   */
  stop(): Promise<void> {
    return this.shutDown('stopped', this.options.gracePeriodMs ?? 10_000, true);
  }

  /** Test hook simulating a crash: stops at once, without releasing the lease (a successor waits for expiry). */
  kill(): Promise<void> {
    return this.shutDown('killed', 0, false);
  }

  private startControllers(): void {
    if (this.state !== 'running') return;
    for (const controller of this.controllers) controller.start();
  }

  private shutDown(reason: ManagerExit, graceMs: number, release: boolean): Promise<void> {
    this.stopping ??= this.runShutDown(reason, graceMs, release);
    return this.stopping;
  }

  private async runShutDown(reason: ManagerExit, graceMs: number, release: boolean): Promise<void> {
    this.state = 'stopping';
    this.logger.info({ reason }, 'controller manager stopping');
    try {
      await Promise.all(this.controllers.map((c) => c.stop(graceMs)));
      // After the workers: a successor must not start while our reconciles still run.
      await this.elector?.stop({ release });
      await this.informers.stop();
    } catch (err) {
      this.logger.error({ err, reason }, 'controller manager did not stop cleanly');
    } finally {
      this.state = 'stopped';
      this.exit(reason);
    }
  }

  private assertNew(what: string): void {
    if (this.state !== 'new') throw new Error(`cannot ${what}: the controller manager already started`);
  }
}
