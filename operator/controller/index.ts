// The controller runtime (docs/architecture.md#controller-runtime): what reconcilers and the operator's entry point import.
export type { Caches, ObjectReader } from './caches.js';
export type { CacheIndex } from './cache-index.js';
export { Controller, controllerOwnerOf, parseRequestKey, requestKey } from './controller.js';
export type { ControllerOptions } from './controller.js';
export { LeaderElector, defaultIdentity } from './leader-election.js';
export type { LeaderElectionConfig, LeaderElectorOptions } from './leader-election.js';
export { ControllerManager } from './manager.js';
export type { ControllerManagerOptions, ManagerExit } from './manager.js';
export { ControllerMetrics } from './metrics.js';
export type { ReconcileOutcome } from './metrics.js';
export { WorkQueue } from './queue.js';
export type { QueueMetrics, WorkQueueOptions } from './queue.js';
export {
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiter.js';
export type { RateLimiter } from './rate-limiter.js';
export { TerminalError } from './types.js';
export type {
  ControllerDefinition,
  ReconcileRequest,
  ReconcileResult,
  Reconciler,
  WatchSource,
} from './types.js';
export { withNothingToClose } from './registration.js';
export type {
  AddController,
  AddedController,
  ControllerDeps,
  ReconcilerControllerDeps,
} from './registration.js';
