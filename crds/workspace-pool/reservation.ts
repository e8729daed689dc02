import type { AgentComputer } from '../agent-computer/types.js';
import { POOL_CLAIMED_FOR_TASK_ANNOTATION, PoolMemberStates, isPoolMemberIn } from './types.js';

/**
 * A claim reserved ahead (docs/adr/0008-warm-pools.md, "Claims reserved ahead"). An API process
 * writes, while nobody waits, an available member's claim for a task that does not exist yet: the
 * task's name (POOL_CLAIMED_FOR_TASK_ANNOTATION), the process that holds it, and until when. A task
 * without workspaceId then costs one write, the Task under that name, which is bound to the member
 * the moment it exists (claim-binding.ts); the rest of the claim (state, owner, spec fields) is
 * written after the answer. Only the holder ever creates that task (each name is handed out once,
 * from its memory), every other claimer skips a reserved member, and a reservation never returns
 * to the pool once its task exists: a holder releases only what it never handed out, and the
 * operator deletes an expired one that no task took.
 */

/** On a reserved member: the API process holding the reservation (its replica id). */
export const POOL_RESERVED_BY_ANNOTATION = 'agentry.dev/reserved-by';
/** On a reserved member: until when (RFC 3339) its holder may hand it out; it renews while it holds it. */
export const POOL_RESERVED_UNTIL_ANNOTATION = 'agentry.dev/reserved-until';

/** How long a reservation lasts from its last write. */
export const RESERVATION_TTL_MS = 5 * 60_000;
/** A holder renews a reservation it still holds once less than this is left. */
export const RESERVATION_RENEW_BELOW_MS = 3 * 60_000;
/**
 * A holder hands a reservation out only while more than this is left, so that the task is written
 * well before the operator may treat the reservation as expired (a slow write, clocks apart).
 */
export const RESERVATION_USE_MARGIN_MS = 60_000;
/** The operator acts on an expired reservation only this long after its end. */
export const RESERVATION_EXPIRY_GRACE_MS = 30_000;

/** What a reserved member says of its reservation. */
export interface Reservation {
  /** The API process holding it. */
  holder: string;
  /** The name its task will have. */
  task: string;
  /** When it ends (ms since the epoch). */
  until: number;
}

/** The member's reservation: only an available member can carry one; undefined when it carries none or it is unreadable. */
export function reservationOf(ac: AgentComputer): Reservation | undefined {
  if (!isPoolMemberIn(ac, PoolMemberStates.Available)) return undefined;
  const annotations = ac.metadata.annotations ?? {};
  const holder = annotations[POOL_RESERVED_BY_ANNOTATION];
  const task = annotations[POOL_CLAIMED_FOR_TASK_ANNOTATION];
  const until = Date.parse(annotations[POOL_RESERVED_UNTIL_ANNOTATION] ?? '');
  if (holder === undefined || task === undefined) return undefined;
  return { holder, task, until: Number.isNaN(until) ? 0 : until };
}

/**
 * Whether an available member is spoken for: reserved (readable or not) or already named by a task's
 * claim. No claimer but the holder may take it.
 */
export const isSpokenFor = (ac: AgentComputer): boolean => {
  const annotations = ac.metadata.annotations ?? {};
  return (
    annotations[POOL_RESERVED_BY_ANNOTATION] !== undefined ||
    annotations[POOL_CLAIMED_FOR_TASK_ANNOTATION] !== undefined
  );
};

/** When the operator may act on the reservation: its end plus the grace. */
export const reservationExpiresAt = (reservation: Reservation): number =>
  reservation.until + RESERVATION_EXPIRY_GRACE_MS;

/** The member reserved (or its reservation renewed) by `holder` for the task named `task`, until `until`. */
export function reservedMember(ac: AgentComputer, holder: string, task: string, until: Date): AgentComputer {
  return {
    ...ac,
    metadata: {
      ...ac.metadata,
      annotations: {
        ...ac.metadata.annotations,
        [POOL_RESERVED_BY_ANNOTATION]: holder,
        [POOL_CLAIMED_FOR_TASK_ANNOTATION]: task,
        [POOL_RESERVED_UNTIL_ANNOTATION]: until.toISOString(),
      },
    },
  };
}

/** The member without a reservation or its claim's task: available to anyone again, or claimed without the reservation's marks. */
export function withoutReservation(ac: AgentComputer): AgentComputer {
  const {
    [POOL_RESERVED_BY_ANNOTATION]: _holder,
    [POOL_RESERVED_UNTIL_ANNOTATION]: _until,
    ...annotations
  } = ac.metadata.annotations ?? {};
  return { ...ac, metadata: { ...ac.metadata, annotations } };
}

/** An available member as released by its holder: neither reserved nor claimed for a task. */
export function releasedMember(ac: AgentComputer): AgentComputer {
  const stripped = withoutReservation(ac);
  const { [POOL_CLAIMED_FOR_TASK_ANNOTATION]: _task, ...annotations } = stripped.metadata.annotations ?? {};
  return { ...stripped, metadata: { ...stripped.metadata, annotations } };
}
