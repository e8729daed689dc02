import type { Registry } from 'prom-client';
import { AgentComputerType, POOL_LABEL } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Principal } from '../auth/principal.js';
import type { ReadModel } from '../read-model.js';
import { claimedMember } from '../../crds/index.js';
import type { ClaimerSpec } from '../../crds/index.js';
import { claimableMembers } from './members.js';
import type { WorkspaceNeeds } from './members.js';
import { ClaimMetrics, ClaimOutcomes } from './metrics.js';
import type { ClaimOutcome } from './metrics.js';
import type { WorkspacePoolReservations } from './reservations.js';

/** Writes one claim tries before it gives up and the caller starts cold. */
const ATTEMPTS = 3;
/**
 * A claim picks at random among this many of the first candidates: replicas whose caches agree
 * would otherwise all race for the same member, and all but one lose a round trip.
 */
const SPREAD = 4;

export interface WorkspacePoolClaimsDeps {
  store: ResourceStore;
  readModel: ReadModel;
  metrics: Registry;
  now: () => Date;
  /** This process's claims reserved ahead; without it, every claim writes the member when it claims. */
  reservations?: WorkspacePoolReservations | undefined;
}

/** The write a claim is sent with (claimAlongside), and how each is undone when the other fails. */
export interface ClaimAlongside<T> {
  /** The task the claim is for: written on the member, so the task runs only once the claim names it. */
  taskName: string;
  write(member: AgentComputer): Promise<T>;
  /** Undoes `write` when the claim lost or failed. */
  undo(written: T): Promise<void>;
  /** Undoes the claim when `write` failed (the member is the caller's now: removed, as a cold one would be). */
  undoClaim(member: AgentComputer): Promise<void>;
}

export type AlongsideOutcome<T> =
  { outcome: 'claimed'; member: AgentComputer; written: T } | { outcome: 'empty' } | { outcome: 'lost' };

const keyOf = (ac: AgentComputer): string => `${ac.metadata.namespace ?? ''}/${ac.metadata.name}`;

/**
 * Claims a ready warm-pool member for a caller (docs/adr/0008-warm-pools.md): one optimistic
 * replace with the cached resourceVersion, so of two claims of one member, in this process or any
 * other replica, the store refuses the second (Conflict), which then tries another. Resolves
 * undefined when no member is ready or every try lost a race: the caller creates cold.
 */
export class WorkspacePoolClaims {
  private readonly metrics: ClaimMetrics;
  /** Members a claim of this process is writing: a concurrent claim here takes another instead of losing to it. */
  private readonly writing = new Set<string>();

  constructor(private readonly deps: WorkspacePoolClaimsDeps) {
    this.metrics = new ClaimMetrics(deps.metrics);
  }

  async claim(
    principal: Principal,
    spec: ClaimerSpec,
    log: Logger,
    needs: WorkspaceNeeds = {},
  ): Promise<AgentComputer | undefined> {
    const started = performance.now();
    const candidates = this.candidates(principal.namespace, needs);
    if (candidates.length === 0) {
      this.record(ClaimOutcomes.Empty, started);
      return undefined;
    }
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const member = this.pick(candidates);
      if (member === undefined) break;
      const claimed = await this.write(member, principal, spec);
      if (claimed === undefined) continue;
      this.recordClaimed(claimed, { attempts: attempt }, started, log);
      return claimed;
    }
    const seconds = this.record(ClaimOutcomes.Contended, started);
    log.info(
      { seconds },
      'every ready warm-pool workspace tried was claimed by another request; starting cold',
    );
    return undefined;
  }

  /**
   * One claim sent at once with a write that names the member (the task of POST /v1/tasks:
   * crds/workspace-pool/claim-binding.ts), so the two cost one round trip. Claimed: both were
   * written. Empty: no member is ready (nothing written). Lost: the claim lost to another claimer
   * (what `alongside` wrote is undone): the caller claims again the usual way or starts cold. A
   * failure of either write undoes the other and is thrown.
   */
  async claimAlongside<T>(
    principal: Principal,
    spec: ClaimerSpec,
    log: Logger,
    alongside: ClaimAlongside<T>,
    needs: WorkspaceNeeds = {},
  ): Promise<AlongsideOutcome<T>> {
    const started = performance.now();
    const member = this.pick(this.candidates(principal.namespace, needs));
    if (member === undefined) {
      this.record(ClaimOutcomes.Empty, started);
      return { outcome: 'empty' };
    }
    const [claim, written] = await Promise.allSettled([
      this.write(member, principal, spec, alongside.taskName),
      alongside.write(member),
    ]);
    if (claim.status === 'fulfilled' && claim.value !== undefined && written.status === 'fulfilled') {
      this.recordClaimed(claim.value, { attempts: 1, withTask: true }, started, log);
      return { outcome: 'claimed', member: claim.value, written: written.value };
    }
    // Undo whichever write went through, then say why.
    if (written.status === 'fulfilled') await alongside.undo(written.value);
    if (claim.status === 'fulfilled' && claim.value !== undefined) await alongside.undoClaim(claim.value);
    if (written.status === 'rejected') throw written.reason;
    if (claim.status === 'rejected') throw claim.reason;
    return { outcome: 'lost' };
  }

  /**
   * A claim this process reserved ahead (reservations.ts), at the cost of one write: `write` stores
   * the task under the name the reservation gave it, which binds it to the member at once. The rest
   * of the claim is written after, without waiting for it. Undefined when this process holds no
   * reservation in the organization (nothing written): the caller claims the usual way. A failing
   * `write` is thrown, and undoes nothing: the caller removes the member, as it would a cold one.
   */
  async claimReserved<T>(
    principal: Principal,
    spec: ClaimerSpec,
    log: Logger,
    write: (member: AgentComputer, taskName: string) => Promise<T>,
  ): Promise<{ member: AgentComputer; written: T } | undefined> {
    const { reservations } = this.deps;
    const handed = reservations?.handOut(principal.namespace);
    if (reservations === undefined || handed === undefined) return undefined;
    const started = performance.now();
    const written = await write(handed.member, handed.task);
    this.recordClaimed(handed.member, { attempts: 1, withTask: true, reserved: true }, started, log);
    void reservations.complete(handed, principal, spec, log);
    return { member: handed.member, written };
  }

  /** The ready members of the organization that meet the needs, as cached. */
  private candidates(namespace: string, needs: WorkspaceNeeds): AgentComputer[] {
    return claimableMembers(this.deps.readModel, namespace, needs);
  }

  /** Removes and returns, at random, one of the first SPREAD candidates no claim of this process is writing. */
  private pick(candidates: AgentComputer[]): AgentComputer | undefined {
    const free = candidates.filter((ac) => !this.writing.has(keyOf(ac)));
    const member = free[Math.floor(Math.random() * Math.min(SPREAD, free.length))];
    if (member !== undefined) candidates.splice(candidates.indexOf(member), 1);
    return member;
  }

  /** The claim's one write; undefined when another claim got the member first (or it is gone). */
  private async write(
    member: AgentComputer,
    principal: Principal,
    spec: ClaimerSpec,
    forTask?: string,
  ): Promise<AgentComputer | undefined> {
    const key = keyOf(member);
    this.writing.add(key);
    try {
      const written = await this.deps.store.replace(
        AgentComputerType,
        claimedMember(member, principal, spec, this.deps.now(), forTask),
      );
      // Seen here at once: a second claim in this process never picks it (as create.ts does).
      this.deps.readModel.agentComputers.observe(written);
      return written;
    } catch (err) {
      if (isStoreError(err, 'Conflict') || isStoreError(err, 'NotFound')) return undefined;
      throw err;
    } finally {
      this.writing.delete(key);
    }
  }

  /** Counts a claim that got its member, and logs it with how it went. */
  private recordClaimed(
    member: AgentComputer,
    how: { attempts: number; withTask?: boolean; reserved?: boolean },
    started: number,
    log: Logger,
  ): void {
    const seconds = this.record(ClaimOutcomes.Claimed, started);
    log.info(
      { member: member.metadata.name, pool: poolOf(member), ...how, seconds },
      'claimed a warm-pool workspace',
    );
  }

  /** Counts the outcome and its time; returns the time in seconds, for the log line. */
  private record(outcome: ClaimOutcome, started: number): number {
    const seconds = (performance.now() - started) / 1000;
    this.metrics.record(outcome, seconds);
    return seconds;
  }
}

const poolOf = (ac: AgentComputer): string | undefined => ac.metadata.labels?.[POOL_LABEL];
