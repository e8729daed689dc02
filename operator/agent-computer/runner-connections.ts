import { PoolMemberStates, isPoolMemberIn, readyForCurrentSpec } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { RUNNER_KEEP_ALIVE_MS } from '../../platform/runner-protocol.js';

/**
 * How often the operator asks an available pool member's runner something: well within the
 * runner's keep-alive, so the connection is never idle long enough to be closed.
 */
export const KEEP_OPEN_INTERVAL_MS = Math.floor(RUNNER_KEEP_ALIVE_MS / 3);
/**
 * After a failed health check a member is asked again this soon, then twice as long each time up to
 * KEEP_OPEN_INTERVAL_MS: a runner's Service can be unreachable for a moment after its Pod is Ready,
 * until the node has programmed its rules (kube-proxy's Service, the network policy).
 */
export const FIRST_RETRY_MS = 250;

export interface RunnerConnectionsOptions {
  logger: Logger;
  /** The workload token of a workspace's runner. */
  tokenOf: (ac: AgentComputer) => string;
  /** KEEP_OPEN_INTERVAL_MS and FIRST_RETRY_MS, unless a test wants them shorter. */
  keepOpenIntervalMs?: number;
  firstRetryMs?: number;
}

/** An available member whose connection is kept open: asked again by its own timer. */
interface KeptMember {
  endpoint: string;
  client: RunnerClient;
  failures: number;
  timer?: NodeJS.Timeout;
}

const keyFor = (namespace: string, name: string): string => `${namespace}/${name}`;
const keyOf = (ac: AgentComputer): string => keyFor(ac.metadata.namespace ?? '', ac.metadata.name);

/**
 * The operator's connections to ready runners (docs/workspace-pools.md#warm-connections). A prompt
 * to a running workspace goes over a connection the previous one left open; the first prompt to a
 * runner would otherwise wait for the name lookup of its Service (several DNS queries through the
 * search domains on a cluster) and a new TCP connection. So the operator opens the connection when
 * a workspace becomes ready (one health check, answered and kept alive by the runner), and keeps it
 * open while the workspace is an available warm-pool member (one more every KEEP_OPEN_INTERVAL_MS,
 * from a timer of its own; a failed one is retried sooner): the first prompt after a claim then
 * costs what a later prompt costs. Workspaces outside a pool that were ready before the operator
 * started are not asked (no burst of requests at a restart). A health check that fails changes
 * nothing else; the dispatch opens its own connection as before.
 */
export class RunnerConnections {
  private readonly members = new Map<string, KeptMember>();
  /** Health checks under way. */
  private readonly asking = new Set<Promise<void>>();
  private readonly keepOpenIntervalMs: number;
  private readonly firstRetryMs: number;

  constructor(private readonly options: RunnerConnectionsOptions) {
    this.keepOpenIntervalMs = options.keepOpenIntervalMs ?? KEEP_OPEN_INTERVAL_MS;
    this.firstRetryMs = options.firstRetryMs ?? FIRST_RETRY_MS;
  }

  /**
   * Opens (or keeps open) the connection to the workspace's runner as its status `ac` says, without
   * waiting for it; `becameReady` when this status is the one that made it ready.
   */
  keep(ac: AgentComputer, becameReady: boolean): void {
    const key = keyOf(ac);
    const endpoint = this.reachable(ac) ? ac.status?.endpoint : undefined;
    if (endpoint !== undefined && isPoolMemberIn(ac, PoolMemberStates.Available)) {
      if (this.members.get(key)?.endpoint === endpoint) return; // its timer keeps it open
      this.stop(key);
      const member: KeptMember = { endpoint, client: this.clientOf(ac, endpoint), failures: 0 };
      this.members.set(key, member);
      this.askMember(key, member);
      return;
    }
    this.stop(key);
    if (endpoint !== undefined && becameReady) void this.ask(key, this.clientOf(ac, endpoint));
  }

  /** Resolves once every health check sent so far has been answered (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.asking]);
  }

  /** The workspace is gone, claimed or no longer ready: nothing to keep for it. */
  forget(namespace: string, name: string): void {
    this.stop(keyFor(namespace, name));
  }

  /** Stops every member's timer (the operator is stopping). */
  close(): void {
    for (const member of this.members.values()) clearTimeout(member.timer);
    this.members.clear();
  }

  /** Asks the member's runner, then schedules the next question: the interval, or a retry. */
  private askMember(key: string, member: KeptMember): void {
    void this.ask(key, member.client).then((answered) => {
      if (this.members.get(key) !== member) return; // forgotten or replaced meanwhile
      member.failures = answered ? 0 : member.failures + 1;
      const delay = answered
        ? this.keepOpenIntervalMs
        : Math.min(this.keepOpenIntervalMs, this.firstRetryMs * 2 ** (member.failures - 1));
      member.timer = setTimeout(() => {
        this.askMember(key, member);
      }, delay);
      member.timer.unref();
    });
  }

  /** Stops keeping the member `key` open, if it was. */
  private stop(key: string): void {
    clearTimeout(this.members.get(key)?.timer);
    this.members.delete(key);
  }

  /** One health check of the workspace `key`'s runner; resolves whether it was answered. */
  private ask(key: string, client: RunnerClient): Promise<boolean> {
    const asked = client.ping().then(
      () => true,
      (err: unknown) => {
        this.options.logger.debug(
          { err, agentComputer: key },
          'opening the connection to the runner failed; asking again, or the next prompt opens its own',
        );
        return false;
      },
    );
    const tracked = asked.then(() => undefined);
    this.asking.add(tracked);
    void tracked.finally(() => this.asking.delete(tracked));
    return asked;
  }

  private clientOf(ac: AgentComputer, endpoint: string): RunnerClient {
    return new RunnerClient({ endpoint, token: this.options.tokenOf(ac) });
  }

  private reachable(ac: AgentComputer): boolean {
    return (
      ac.metadata.deletionTimestamp === undefined &&
      ac.spec.operatingMode === 'Running' &&
      readyForCurrentSpec(ac)
    );
  }
}
