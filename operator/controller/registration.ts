import type { Registry } from 'prom-client';
import type { KubeObject } from '../../crds/resource.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Controller } from './controller.js';
import type { ControllerManager } from './manager.js';

/** What most controllers are given by the operator; each adds what its reconciler needs. */
export interface ControllerDeps {
  store: ResourceStore;
  /** The operator's logger: a controller's registration names it in a child. */
  logger: Logger;
  registry: Registry;
}

/**
 * The deps of a controller whose reconciler takes `Options`: the shared ones, the reconciler's own
 * (less what the registration builds itself, `Built`), and how many reconciles may run at once.
 */
export type ReconcilerControllerDeps<Options, Built extends keyof Options = never> = ControllerDeps &
  Omit<Options, 'store' | 'logger' | 'now' | Built> & {
    /** Parallel reconciles (one key never twice at once); each `add…Controller` says its default. */
    workers?: number | undefined;
  };

/** What adding a controller hands back to the operator. */
export interface AddedController<T extends KubeObject = KubeObject> {
  /** `enqueue` wakes one of its objects by hand (a runtime saw its workload change). */
  controller: Controller<T>;
  /** Once the manager has stopped: closes what the controller keeps open beside its workers (event streams, pollers). */
  afterStop(): Promise<void>;
}

/**
 * How a kind's folder adds each of its controllers to the manager (`add…Controller` in
 * operator/<kind>/controller.ts), the one way operator.ts registers them; before `manager.start()`.
 */
export type AddController<Deps, T extends KubeObject = KubeObject> = (
  manager: ControllerManager,
  deps: Deps,
) => AddedController<T>;

/** A controller that keeps nothing open beside its workers. */
export function withNothingToClose<T extends KubeObject>(controller: Controller<T>): AddedController<T> {
  return { controller, afterStop: () => Promise.resolve() };
}
