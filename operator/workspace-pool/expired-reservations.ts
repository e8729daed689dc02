import {
  AgentComputerType,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskType,
  claimedForTask,
  reservationExpiresAt,
  reservationOf,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';

/** The available members whose reservation has expired at `now` (crds/workspace-pool/reservation.ts). */
export const expiredReservations = (members: readonly AgentComputer[], now: Date): AgentComputer[] =>
  members.filter((ac) => {
    const reservation = reservationOf(ac);
    return (
      reservation !== undefined &&
      ac.metadata.deletionTimestamp === undefined &&
      reservationExpiresAt(reservation) <= now.getTime()
    );
  });

/** When the next reservation of these members expires (ms since the epoch), if any does. */
export function nextReservationExpiry(members: readonly AgentComputer[]): number | undefined {
  const times = members.flatMap((ac) => {
    const reservation = reservationOf(ac);
    return reservation === undefined ? [] : [reservationExpiresAt(reservation)];
  });
  return times.length === 0 ? undefined : Math.min(...times);
}

export interface SettleDeps {
  store: ResourceStore;
  caches: Caches;
  logger: Logger;
}

/**
 * Settles reservations their holder stopped renewing (its API process ended without releasing
 * them). One whose task was written is that task's workspace: the claim is completed from the
 * task (the holder stopped between the task's answer and the rest of the claim). One no task took
 * is deleted, never returned to the pool: whether its holder handed it out cannot be known. Both
 * writes go over the member's resourceVersion, so a holder that renewed meanwhile keeps it. The
 * task is read from the store, not a cache: a task just written must not be missed. Returns the
 * names of the members that left the pool's available ones.
 */
export async function settleExpiredReservations(
  deps: SettleDeps,
  expired: readonly AgentComputer[],
  now: Date,
): Promise<Set<string>> {
  const settled = new Set<string>();
  for (const member of expired) {
    try {
      if (await settleOne(deps, member, now)) settled.add(member.metadata.name);
    } catch (err) {
      if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'NotFound')) throw err;
    }
  }
  return settled;
}

/** Completes or deletes one expired reservation; false when the member carries none. */
async function settleOne(deps: SettleDeps, member: AgentComputer, now: Date): Promise<boolean> {
  const reservation = reservationOf(member);
  if (reservation === undefined) return false;
  const { namespace = '', name, uid, resourceVersion } = member.metadata;
  const task = await deps.store.get(TaskType, namespace, reservation.task);
  if (task?.metadata.annotations?.[TASK_CLAIMED_WORKSPACE_ANNOTATION] === name) {
    const written = await deps.store.replace(AgentComputerType, claimedForTask(member, task, now));
    deps.caches.observe(AgentComputerType, written);
    deps.logger.info(
      { member: name, namespace, task: reservation.task, holder: reservation.holder },
      'completed a warm-pool claim its API process left half-written',
    );
    return true;
  }
  const left = await deps.store.delete(AgentComputerType, namespace, name, {
    ...(uid === undefined ? {} : { uid }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
  });
  deps.caches.observe(AgentComputerType, left ?? member, left === undefined);
  deps.logger.info(
    { member: name, namespace, holder: reservation.holder },
    'deleted a warm-pool member whose reservation expired unused',
  );
  return true;
}
