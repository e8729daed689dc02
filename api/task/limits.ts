import { clientTaskStatus } from '../../crds/index.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import { isDeleted } from './access.js';
import { runningTasksBucket } from './list-index.js';

/**
 * Organization limits (Organization spec.limits), counted from the caches. Two requests racing may
 * both pass; the overshoot is bounded by the number of API replicas times concurrent requests,
 * which is what every cache-served limit accepts in exchange for no store round trip per request.
 */

/** `limits.concurrentTasks`: tasks with a pending or running prompt, the deleted ones aside. */
export function assertTaskSlot(readModel: ReadModel, principal: Principal, except?: string): void {
  const limit = principal.organization.spec.limits.concurrentTasks;
  const exceptTask = except === undefined ? undefined : readModel.tasks.get(principal.namespace, except);
  const exceptRunning =
    exceptTask !== undefined && !isDeleted(exceptTask) && clientTaskStatus(exceptTask) === 'running';
  const running =
    readModel.tasks.index.size(runningTasksBucket(principal.namespace)) - (exceptRunning ? 1 : 0);
  if (running >= limit) {
    throw new ApiError(
      'limit_exceeded',
      `The organization may run at most ${limit} tasks at once; wait for one to finish or cancel one`,
    );
  }
}
