import {
  AgentComputerType,
  WorkspacePoolConditions,
  WorkspacePoolEventReasons,
  WorkspacePoolReasons,
  WorkspacePoolType,
} from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { findCondition } from '../../crds/conditions.js';
import { describeError } from '../../platform/describe-error.js';
import type { EventRecorder } from '../../platform/events.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import { writeStatus } from '../../platform/store/status-writer.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import {
  claimQuietPassAt,
  deferredRefillDue,
  demandWindowEnds,
  desiredCount,
  isInvalidSpec,
  planRefill,
  refillTarget,
  takeCensus,
} from './census.js';
import type { PoolCensus } from './census.js';
import {
  expiredReservations,
  nextReservationExpiry,
  settleExpiredReservations,
} from './expired-reservations.js';
import { poolMember, randomSuffix } from './member.js';
import type { WorkspacePoolMetrics } from './metrics.js';
import { poolLabel } from './metrics.js';
import { RefillBudget } from './refill-budget.js';
import { computePoolStatus } from './status.js';

/** The AgentComputers labelled for a pool (claimed ones included), from the cache's pool index. */
export type PoolMembers = (namespace: string, pool: string) => readonly AgentComputer[];

export interface WorkspacePoolReconcilerOptions {
  store: ResourceStore;
  /** The manager's caches of WorkspacePools and AgentComputers: read there, every write recorded. */
  caches: Caches;
  membersOf: PoolMembers;
  metrics: WorkspacePoolMetrics;
  events?: EventRecorder | undefined;
  logger: Logger;
  now?: () => Date;
  /** How long a member may fail before it is replaced. Default FAILED_MEMBER_GRACE_MS (5 min). */
  failedMemberGraceMs?: number | undefined;
}

const creationTime = (ac: AgentComputer): number => Date.parse(ac.metadata.creationTimestamp ?? '');

/** What one pass did to the members. */
interface Changes {
  created: AgentComputer[];
  removed: Set<string>;
  /** The refill budget ran out before every missing member was made. */
  limited: boolean;
  /** Why a member could not be made (the store refused it), if one could not. */
  makeError?: string | undefined;
}

/**
 * Keeps a WorkspacePool's available members at its desired count (docs/adr/0008-warm-pools.md):
 * counts them from the cache, makes the missing ones within refillPerMinute, deletes a surplus, and
 * writes status once, only when it changed. Level-based: every member's change wakes the pool.
 */
export class WorkspacePoolReconciler implements Reconciler {
  private readonly now: () => Date;
  private readonly budget = new RefillBudget();
  /**
   * Members made but not in the pool index yet (the index follows watch events, not this process's
   * own writes): counted from the cache meanwhile, so a quick second pass does not make them twice.
   */
  private readonly made = new Map<string, Set<string>>();

  constructor(private readonly options: WorkspacePoolReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult | undefined> {
    const { caches, store } = this.options;
    const key = poolLabel(request.namespace, request.name);
    const pool = caches.get(WorkspacePoolType, request.namespace, request.name);
    if (pool === undefined || pool.metadata.deletionTimestamp !== undefined) {
      // Its available members go with it (owner references); claimed ones no longer name it as owner.
      this.options.metrics.forget(key);
      this.budget.forget(key);
      this.made.delete(key);
      return undefined;
    }
    const now = this.now();
    const members = await this.withoutExpiredReservations(this.membersOf(pool, key), now);
    this.budget.seed(
      key,
      members.map(creationTime).filter((time) => !Number.isNaN(time)),
    );
    const grace = this.options.failedMemberGraceMs;
    const census = takeCensus(members, now, grace);
    const desired = isInvalidSpec(pool.spec)
      ? undefined
      : desiredCount(pool.spec, census.recentClaims.length);
    const quietPassAt = desired === undefined ? undefined : claimQuietPassAt(pool.spec, census, desired, now);
    if (quietPassAt !== undefined) return { requeueAfterMs: Math.max(quietPassAt - now.getTime(), 1) };
    const changes =
      desired === undefined
        ? { created: [], removed: new Set<string>(), limited: false }
        : await this.converge(pool, key, census, desired, now);
    const after = takeCensus(
      [...members.filter((ac) => !changes.removed.has(ac.metadata.name)), ...changes.created],
      now,
      grace,
    );
    // A failed member replaced this pass still explains the pool's state until a replacement is Ready.
    const observation = {
      census: { ...after, failure: after.failure ?? census.failure },
      desired,
      makeError: changes.makeError,
    };
    const status = computePoolStatus(pool, observation, now);
    await writeStatus(store, WorkspacePoolType, pool, status, { caches });
    this.options.metrics.record(key, after.ready.length, after.provisioning.length);
    await this.reportFailure(pool, status.conditions);
    // Retried with back-off; the status already says why.
    if (changes.makeError !== undefined) throw new Error(`warm pool ${key}: ${changes.makeError}`);
    return this.requeue(pool, key, census, changes, now, nextReservationExpiry(members));
  }

  /** The members after settling the reservations that expired (expired-reservations.ts). */
  private async withoutExpiredReservations(members: AgentComputer[], now: Date): Promise<AgentComputer[]> {
    const expired = expiredReservations(members, now);
    if (expired.length === 0) return members;
    const settled = await settleExpiredReservations(this.options, expired, now);
    return members.filter((ac) => !settled.has(ac.metadata.name));
  }

  /** The indexed members, and those this process made that the index has not caught up with. */
  private membersOf(pool: WorkspacePool, key: string): AgentComputer[] {
    const namespace = pool.metadata.namespace ?? '';
    const indexed = [...this.options.membersOf(namespace, pool.metadata.name)];
    const pending = this.made.get(key);
    for (const name of pending ?? []) {
      const seen = indexed.some((ac) => ac.metadata.name === name);
      const cached = seen ? undefined : this.options.caches.get(AgentComputerType, namespace, name);
      if (cached !== undefined) indexed.push(cached);
      else pending?.delete(name); // indexed now, or gone
    }
    if (pending?.size === 0) this.made.delete(key);
    return indexed;
  }

  private async converge(
    pool: WorkspacePool,
    key: string,
    census: PoolCensus,
    desired: number,
    now: Date,
  ): Promise<Changes> {
    const plan = planRefill(census, desired, refillTarget(pool.spec, census, now));
    const removed = await this.removeSurplus(plan.remove);
    const allowed = Math.min(
      plan.create,
      this.budget.remaining(key, pool.spec.refillPerMinute, now.getTime()),
    );
    const results = await Promise.allSettled(
      Array.from({ length: allowed }, () => this.createMember(pool, key, now)),
    );
    const created = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refused = results.find((result) => result.status === 'rejected');
    if (created.length > 0 || removed.size > 0) {
      this.options.logger.info(
        { pool: key, desired, created: created.length, removed: removed.size },
        'refilled warm pool',
      );
    }
    return {
      created,
      removed,
      limited: allowed < plan.create,
      makeError: refused === undefined ? undefined : describeError(refused.reason),
    };
  }

  private async createMember(pool: WorkspacePool, key: string, now: Date): Promise<AgentComputer> {
    const { store, caches } = this.options;
    this.budget.spend(key, now.getTime());
    for (let attempt = 1; ; attempt++) {
      try {
        const created = await store.create(AgentComputerType, poolMember(pool, randomSuffix()));
        caches.observe(AgentComputerType, created);
        const pending = this.made.get(key) ?? new Set<string>();
        this.made.set(key, pending.add(created.metadata.name));
        this.options.metrics.created.labels(key).inc();
        return created;
      } catch (err) {
        // Another object took the random name: draw again, once. Else the store's words go to status.
        if (isStoreError(err, 'AlreadyExists') && attempt === 1) continue;
        throw err;
      }
    }
  }

  /**
   * Deletes surplus members only if they did not change since read: a member the API server has
   * just claimed (a newer resourceVersion) is left alone, and the next pass counts it as claimed.
   */
  private async removeSurplus(surplus: readonly AgentComputer[]): Promise<Set<string>> {
    const { store, caches } = this.options;
    const removed = new Set<string>();
    for (const ac of surplus) {
      const { namespace, name, uid, resourceVersion } = ac.metadata;
      try {
        const left = await store.delete(AgentComputerType, namespace, name, {
          ...(uid === undefined ? {} : { uid }),
          ...(resourceVersion === undefined ? {} : { resourceVersion }),
        });
        caches.observe(AgentComputerType, left ?? ac, left === undefined);
        removed.add(name);
      } catch (err) {
        if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'NotFound')) throw err;
      }
    }
    return removed;
  }

  /** A Warning Event when the pool starts failing to refill (or fails for another reason). */
  private async reportFailure(
    pool: WorkspacePool,
    conditions: Parameters<typeof findCondition>[0],
  ): Promise<void> {
    const { RefillFailed } = WorkspacePoolReasons;
    const next = findCondition(conditions, WorkspacePoolConditions.Ready);
    if (next?.reason !== RefillFailed) return;
    const before = findCondition(pool.status?.conditions, WorkspacePoolConditions.Ready);
    if (before?.reason === RefillFailed && before.message === next.message) return;
    this.options.logger.warn(
      { pool: poolLabel(pool.metadata.namespace, pool.metadata.name), message: next.message },
      'warm pool cannot refill',
    );
    await this.options.events?.record(pool, 'Warning', WorkspacePoolEventReasons.RefillFailed, next.message);
  }

  /**
   * Looks again when the budget frees a slot (members still missing), when the oldest claim
   * leaves the demand window (the desired count may fall), when a failing member's grace ends
   * (it is replaced then), or when a reservation expires (settled then); member changes wake it
   * otherwise.
   */
  private requeue(
    pool: WorkspacePool,
    key: string,
    census: PoolCensus,
    changes: Changes,
    now: Date,
    reservationExpiry: number | undefined,
  ): ReconcileResult | undefined {
    const times = [
      reservationExpiry,
      changes.limited ? this.budget.nextAt(key, pool.spec.refillPerMinute, now.getTime()) : undefined,
      demandWindowEnds(census),
      census.nextReplacementAt,
      deferredRefillDue(census, now),
    ].filter((time): time is number => time !== undefined);
    if (times.length === 0) return undefined;
    return { requeueAfterMs: Math.max(Math.min(...times) - now.getTime(), 100) };
  }
}
