import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseType } from '../../crds/core.js';
import type { Lease } from '../../crds/core.js';
import type { Logger } from '../../platform/log.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';

export interface LeaderElectionConfig {
  /** The Lease's namespace (in Kubernetes it must exist) and name. */
  namespace: string;
  name: string;
  /** Default: hostname, pid and a random suffix, so two processes never share one. */
  identity?: string;
  /** How long a lease holds without renewal before another candidate may take it. Default 15 s. */
  leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down; shorter than the lease. Default 10 s. */
  renewDeadlineMs?: number;
  /** Between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
}

export interface LeaderElectorOptions extends LeaderElectionConfig {
  store: ResourceStore;
  logger: Logger;
  onStartedLeading?: () => void;
  /** Leadership was lost (not released): whatever ran as leader must stop at once. */
  onStoppedLeading?: () => void;
  /** Follows leadership: set to 1 while leading, 0 otherwise. */
  onStatus?: (leading: boolean) => void;
}

export const defaultIdentity = (): string => `${hostname()}_${process.pid}_${randomBytes(4).toString('hex')}`;

/** Kubernetes' MicroTime: RFC 3339 with exactly six fractional digits (the API server rejects three). */
const microTime = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection: a candidate takes
 * the lease when it is free or its holder's renewTime is older than the lease duration, writing with
 * the resourceVersion it read (a Conflict means another candidate won); the leader renews every retry
 * period and steps down when it could not renew for the renew deadline, which is shorter than the
 * lease, so it stops before anyone else can start. Expiry compares the holder's renewTime with this
 * process's clock: candidates need clocks in sync to well under the lease duration (NTP does that).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly abort = new AbortController();
  private leading = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: LeaderElectorOptions) {
    this.identity = options.identity ?? defaultIdentity();
    this.leaseMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryMs = options.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryMs && this.retryMs > 0)) {
      throw new Error(
        `leader election needs lease duration > renew deadline > retry period > 0 (got ${this.leaseMs} ms, ${this.renewDeadlineMs} ms, ${this.retryMs} ms)`,
      );
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning in the background: acquire, then renew until stopped or lost. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops campaigning; a leader releases the lease (unless `release` is false) so a successor takes over at once. */
  async stop({ release = true }: { release?: boolean } = {}): Promise<void> {
    this.abort.abort();
    await this.loop;
    const wasLeading = this.leading;
    this.setLeading(false);
    if (wasLeading && release) await this.release();
  }

  /** A method, not `signal.aborted` inline: the compiler would assume it cannot change across awaits. */
  private stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    let acquired = false;
    while (!signal.aborted && !acquired) {
      acquired = await this.attempt();
      if (!acquired) await sleep(this.retryMs, signal);
    }
    if (!acquired) return;
    // Set even when stopping meanwhile: stop() then releases what was just acquired.
    this.setLeading(true);
    if (this.stopped()) return;
    this.options.logger.info({ identity: this.identity, lease: this.options.name }, 'became leader');
    this.options.onStartedLeading?.();
    await this.renewUntilLost();
    if (this.stopped()) return;
    this.setLeading(false);
    this.options.logger.error(
      { identity: this.identity, lease: this.options.name, renewDeadlineMs: this.renewDeadlineMs },
      'lost leadership: could not renew the lease within the renew deadline',
    );
    this.options.onStoppedLeading?.();
  }

  /** Renews every retry period; returns when stopped, or when no renewal succeeded for the renew deadline. */
  private async renewUntilLost(): Promise<void> {
    let renewed = performance.now();
    while (!this.stopped()) {
      await sleep(this.retryMs, this.abort.signal);
      if (this.stopped()) return;
      const left = renewed + this.renewDeadlineMs - performance.now();
      // A hung request must not keep a leader that cannot renew in charge past the deadline.
      if (left > 0 && (await withDeadline(this.attempt(), left))) renewed = performance.now();
      else if (performance.now() - renewed >= this.renewDeadlineMs) return;
    }
  }

  /** One try to acquire or renew; false when someone else holds the lease or the write lost a race. */
  private async attempt(): Promise<boolean> {
    try {
      return await this.tryAcquireOrRenew();
    } catch (err) {
      if (this.abort.signal.aborted) return false;
      this.options.logger.warn({ err, lease: this.options.name }, 'leader election: lease update failed');
      return false;
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { store, namespace, name } = this.options;
    const now = new Date();
    const current = await store.get(LeaseType, namespace, name);
    if (current === undefined) {
      try {
        await store.create(LeaseType, this.leaseObject(undefined, now));
        return true;
      } catch (err) {
        if (isStoreError(err, 'AlreadyExists')) return false;
        throw err;
      }
    }
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.identity && !this.expired(current, now)) return false;
    try {
      await store.replace(LeaseType, this.leaseObject(current, now));
      return true;
    } catch (err) {
      if (isStoreError(err, 'Conflict')) return false;
      throw err;
    }
  }

  private expired(lease: Lease, now: Date): boolean {
    const renewTime = lease.spec?.renewTime ?? lease.spec?.acquireTime;
    const renewed = renewTime === undefined || renewTime === null ? Number.NaN : Date.parse(renewTime);
    // No readable renew time: nothing proves the holder alive, so the lease counts as expired.
    return Number.isNaN(renewed) || renewed + this.leaseMs < now.getTime();
  }

  private leaseObject(current: Lease | undefined, now: Date): Lease {
    const spec = current?.spec;
    const ours = spec?.holderIdentity === this.identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: current?.metadata ?? { name: this.options.name, namespace: this.options.namespace },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseMs / 1000)),
        acquireTime: ours && spec.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec?.leaseTransitions ?? 0) + (current === undefined || ours ? 0 : 1),
      },
    };
  }

  /** Clears the holder, but only if it is still us: a successor need not wait for expiry. */
  private async release(): Promise<void> {
    const { store, namespace, name, logger } = this.options;
    try {
      const current = await store.get(LeaseType, namespace, name);
      if (current?.spec?.holderIdentity !== this.identity) return;
      await store.replace(LeaseType, {
        ...current,
        spec: { ...current.spec, holderIdentity: null, renewTime: microTime(new Date()) },
      });
      logger.info({ identity: this.identity, lease: name }, 'released the leader lease');
    } catch (err) {
      // The lease then expires on its own; the successor only waits longer.
      logger.warn({ err, lease: name }, 'could not release the leader lease');
    }
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.onStatus?.(leading);
  }
}

/** The promise's value, or false if it has not settled within `ms` (the promise keeps running). */
async function withDeadline(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
