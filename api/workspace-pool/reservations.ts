import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  AgentComputerType,
  CLAIM_QUIET_MS,
  RESERVATION_RENEW_BELOW_MS,
  RESERVATION_TTL_MS,
  RESERVATION_USE_MARGIN_MS,
  claimedMember,
  releasedMember,
  reservationOf,
  reservedMember,
} from '../../crds/index.js';
import type { AgentComputer, Claimer, ClaimerSpec } from '../../crds/index.js';
import type { Registry } from 'prom-client';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReadModel } from '../read-model.js';
import { claimableMembers, isServing } from './members.js';
import { registerReservationsGauge } from './metrics.js';

/** How often held reservations are looked at (renewed, or dropped when their member went). */
const RENEW_EVERY_MS = 30_000;
/** How long, after it wanted one, this process keeps trying to reserve a member of an organization's pools. */
const WANT_FOR_MS = 120_000;
/** How long the health check that opens a connection to a reserved member's runner may take. */
const HEALTH_TIMEOUT_MS = 5_000;
/** Writes a claim's completion tries before it leaves it to the operator (at the reservation's expiry). */
const COMPLETION_ATTEMPTS = 5;

export interface WorkspacePoolReservationsDeps {
  store: ResourceStore;
  readModel: ReadModel;
  logger: Logger;
  now: () => Date;
  /** This process's name on its reservations; default: host, process id and a random suffix. */
  holder?: string;
  /** Where the held reservations are reported (agentry_workspace_pool_reservations). */
  metrics?: Registry;
  /** How long after a task's answer the rest of its claim is written; default CLAIM_QUIET_MS. */
  completeAfterMs?: number;
  /**
   * Signs the health checks that open this process's connection to a reserved member's runner, so
   * the task's first event stream does not wait for a new one; without it, none is opened.
   */
  installationKey?: InstallationKey;
}

/** A reservation handed out: the member, the name the task must be written under, and when (the claim's time). */
export interface HandedOut {
  member: AgentComputer;
  task: string;
  at: Date;
}

interface Held {
  name: string;
  task: string;
}

/**
 * This API process's claims reserved ahead (crds/workspace-pool/reservation.ts): at most one
 * member per organization, reserved while the organization's pools keep another serving member
 * for every other claimer, wanted again after each hand-out (a second after it: the first second
 * belongs to the claimed workspace's first prompt), renewed while held, released on close.
 */
export class WorkspacePoolReservations {
  readonly holder: string;
  private readonly held = new Map<string, Held>();
  /** Organizations (namespaces) this process wants a reservation in, until when (ms). */
  private readonly wanted = new Map<string, number>();
  private readonly writing = new Set<string>();
  private wantTimer: NodeJS.Timeout | undefined;
  private reserving = false;
  /** Completions waiting for their second, by member: started at once on close. */
  private readonly waitingCompletions = new Map<string, () => void>();
  private readonly writingCompletions = new Set<Promise<void>>();
  private readonly completeAfterMs: number;
  private readonly renewTimer: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly deps: WorkspacePoolReservationsDeps) {
    this.holder = deps.holder ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.completeAfterMs = deps.completeAfterMs ?? CLAIM_QUIET_MS;
    this.renewTimer = setInterval(() => void this.renewAll(), RENEW_EVERY_MS).unref();
    if (deps.metrics !== undefined) registerReservationsGauge(deps.metrics, () => this.held.size);
  }

  /**
   * Hands out this process's reservation in `namespace`, once: the member and its task's name, when
   * the member still serves, is still reserved by this process and has time left. Undefined
   * otherwise (the caller claims the usual way); a reservation is wanted again either way.
   */
  handOut(namespace: string): HandedOut | undefined {
    const held = this.held.get(namespace);
    this.held.delete(namespace);
    this.want(namespace);
    if (held === undefined) return undefined;
    const member = this.deps.readModel.agentComputers.get(namespace, held.name);
    if (member === undefined) return undefined;
    const reservation = reservationOf(member);
    if (reservation?.holder !== this.holder || reservation.task !== held.task) return undefined;
    if (isServing(member, {}) && reservation.until - this.deps.now().getTime() > RESERVATION_USE_MARGIN_MS)
      return { member, task: held.task, at: this.deps.now() };
    void this.release(member); // never handed out: back to the pool
    return undefined;
  }

  /**
   * Writes the rest of a claim handed out and written as its task (state, owner, the claimer's
   * spec fields) CLAIM_QUIET_MS after the task's answer: until then the write, its watch events and
   * the reconcile passes they wake would share the API server, etcd and the cores with the task's
   * first dispatch, and the member is the task's already (lookups show it claimed:
   * api/agent-computer/find-workspace.ts). Resolves once written, or given up.
   */
  complete(handed: HandedOut, claimer: Claimer, spec: ClaimerSpec, log: Logger): Promise<void> {
    const key = `${handed.member.metadata.namespace ?? ''}/${handed.member.metadata.name}`;
    return new Promise<void>((resolve) => {
      const start = (): void => {
        clearTimeout(timer);
        this.waitingCompletions.delete(key);
        const writing = this.writeCompletion(handed, claimer, spec, log)
          .catch((err: unknown) => {
            log.error({ err, member: handed.member.metadata.name }, 'completing a reserved claim failed');
          })
          .finally(() => this.writingCompletions.delete(writing));
        this.writingCompletions.add(writing);
        void writing.then(resolve);
      };
      const timer = setTimeout(start, this.completeAfterMs).unref();
      this.waitingCompletions.set(key, start);
    });
  }

  /** The completion's write; a conflict is read again and retried. When every try fails, the operator completes it at the reservation's expiry. */
  private async writeCompletion(
    handed: HandedOut,
    claimer: Claimer,
    spec: ClaimerSpec,
    log: Logger,
  ): Promise<void> {
    const { namespace = '', name } = handed.member.metadata;
    // As cached now: the operator may have written its status since the hand-out.
    let member: AgentComputer | undefined =
      this.deps.readModel.agentComputers.get(namespace, name) ?? handed.member;
    for (let attempt = 1; attempt <= COMPLETION_ATTEMPTS && member !== undefined; attempt++) {
      if (reservationOf(member)?.task !== handed.task) return; // completed, or not ours to complete
      try {
        const written = await this.deps.store.replace(
          AgentComputerType,
          claimedMember(member, claimer, spec, handed.at, handed.task),
        );
        this.deps.readModel.agentComputers.observe(written);
        return;
      } catch (err) {
        if (isStoreError(err, 'NotFound')) return;
        if (!isStoreError(err, 'Conflict'))
          log.warn({ err, member: name, attempt }, 'could not complete a warm-pool claim reserved ahead');
      }
      member = await this.deps.store.get(AgentComputerType, namespace, name).catch(() => member);
    }
    log.error(
      { member: name, task: handed.task },
      'gave up completing a warm-pool claim reserved ahead; the operator completes it when the reservation expires',
    );
  }

  /** Stops reserving, writes the completions still waiting, and releases what this process still holds (on shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    if (this.wantTimer !== undefined) clearTimeout(this.wantTimer);
    for (const start of [...this.waitingCompletions.values()]) start();
    await Promise.all([...this.writingCompletions]);
    const held = [...this.held.entries()];
    this.held.clear();
    await Promise.all(
      held.map(([namespace, { name }]) => {
        const member = this.deps.readModel.agentComputers.get(namespace, name);
        return member === undefined ? Promise.resolve() : this.release(member);
      }),
    );
  }

  /** Wants a reservation in `namespace` from CLAIM_QUIET_MS on, for WANT_FOR_MS. */
  private want(namespace: string): void {
    if (this.closed) return;
    this.wanted.set(namespace, this.deps.now().getTime() + WANT_FOR_MS);
    this.scheduleWants(CLAIM_QUIET_MS);
  }

  /** One round of tries after `delayMs`, unless one is due or running: rounds never overlap. */
  private scheduleWants(delayMs: number): void {
    if (this.wantTimer !== undefined || this.reserving || this.closed || this.wanted.size === 0) return;
    this.wantTimer = setTimeout(() => {
      this.wantTimer = undefined;
      this.reserving = true;
      void this.reserveWanted().finally(() => {
        this.reserving = false;
        this.scheduleWants(CLAIM_QUIET_MS);
      });
    }, delayMs).unref();
  }

  /** One try in every organization that wants a reservation; those that got one, or waited long enough, want no more. */
  private async reserveWanted(): Promise<void> {
    const now = this.deps.now().getTime();
    await Promise.all(
      [...this.wanted.entries()].map(async ([namespace, until]) => {
        if (this.held.has(namespace) || (await this.reserve(namespace)) || until <= now)
          this.wanted.delete(namespace);
      }),
    );
  }

  /**
   * Reserves one serving member of the organization's pools when at least one other stays for
   * every other claimer (another API process, POST /agent-computers): a reservation never leaves a
   * pool with nothing to claim. True when it holds one now.
   */
  private async reserve(namespace: string): Promise<boolean> {
    const candidates = claimableMembers(this.deps.readModel, namespace, {}).filter(
      (ac) => !this.writing.has(`${namespace}/${ac.metadata.name}`),
    );
    const member = candidates[Math.floor(Math.random() * candidates.length)];
    if (member === undefined || candidates.length < 2) return false;
    const task = randomUUID();
    const written = await this.write(reservedMember(member, this.holder, task, this.until()));
    if (written === undefined) return false;
    if (this.closed) {
      await this.release(written); // closed while writing: nobody will hand it out
      return true;
    }
    this.held.set(namespace, { name: member.metadata.name, task });
    this.openConnection(written);
    return true;
  }

  /** Renews every held reservation with less than RESERVATION_RENEW_BELOW_MS left; drops one whose member went. */
  private async renewAll(): Promise<void> {
    const now = this.deps.now().getTime();
    await Promise.all(
      [...this.held.entries()].map(async ([namespace, held]) => {
        const member = this.deps.readModel.agentComputers.get(namespace, held.name);
        const reservation = member === undefined ? undefined : reservationOf(member);
        if (member === undefined || reservation?.holder !== this.holder || reservation.task !== held.task) {
          this.held.delete(namespace);
          return;
        }
        if (reservation.until - now >= RESERVATION_RENEW_BELOW_MS) return;
        const written = await this.write(reservedMember(member, this.holder, held.task, this.until()));
        if (written !== undefined) this.openConnection(written);
        // Not renewed: the member changed (it is read again next time) or went.
        else if (this.deps.readModel.agentComputers.get(namespace, held.name) === undefined)
          this.held.delete(namespace);
      }),
    );
  }

  /**
   * One health check of the reserved member's runner: its answer leaves a kept-alive connection in
   * this process's pool (runners keep one 5 minutes and say so; renewals come every 2), which the
   * task's first event stream then takes, as a running workspace's stream takes the last one's
   * (docs/workspace-pools.md#warm-connections). A failure changes nothing.
   */
  private openConnection(member: AgentComputer): void {
    const endpoint = member.status?.endpoint;
    const key = this.deps.installationKey;
    if (endpoint === undefined || key === undefined) return;
    const runner = new RunnerClient({
      endpoint,
      token: key.runnerToken(member),
      timeoutMs: HEALTH_TIMEOUT_MS,
    });
    void runner.ping().catch(() => undefined);
  }

  /** Gives a reservation this process never handed out back to the pool. */
  private async release(member: AgentComputer): Promise<void> {
    await this.write(releasedMember(member));
  }

  private until(): Date {
    return new Date(this.deps.now().getTime() + RESERVATION_TTL_MS);
  }

  /** One optimistic replace of a member; undefined when another writer changed it first or it is gone. */
  private async write(member: AgentComputer): Promise<AgentComputer | undefined> {
    const { name } = member.metadata;
    const key = `${member.metadata.namespace ?? ''}/${name}`;
    this.writing.add(key);
    try {
      const written = await this.deps.store.replace(AgentComputerType, member);
      this.deps.readModel.agentComputers.observe(written);
      return written;
    } catch (err) {
      if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'NotFound'))
        this.deps.logger.warn({ err, member: name }, 'could not write a warm-pool reservation');
      return undefined;
    } finally {
      this.writing.delete(key);
    }
  }
}
