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

export interface RunnerConnectionsOptions {
  logger: Logger;
  /** The workload token of a workspace's runner. */
  tokenOf: (ac: AgentComputer) => string;
  now?: () => number;
}

interface Opened {
  endpoint: string;
  at: number;
}

const keyOf = (ac: AgentComputer): string => `${ac.metadata.namespace ?? ''}/${ac.metadata.name}`;

/**
 * The operator's connections to ready runners (docs/workspace-pools.md#warm-connections). A prompt
 * to a running workspace goes over a connection the previous one left open; the first prompt to a
 * runner would otherwise wait for the name lookup of its Service (several DNS queries through the
 * search domains on a cluster) and a new TCP connection. So the operator opens the connection when
 * a workspace becomes ready (one health check, answered and kept alive by the runner), and keeps it
 * open while the workspace is an available warm-pool member (one more every KEEP_OPEN_INTERVAL_MS):
 * the first prompt after a claim then costs what a later prompt costs. Workspaces that were ready
 * before the operator started are not asked (no burst of requests at a restart). A health check
 * that fails changes nothing; the dispatch opens its own connection as before.
 */
export class RunnerConnections {
  private readonly opened = new Map<string, Opened>();
  /** Health checks under way. */
  private readonly opening = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly options: RunnerConnectionsOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Opens (or keeps open) the connection to the workspace's runner as its status `ac` says, without
   * waiting for it; `becameReady` when this status is the one that made it ready. Answers in how many
   * ms this wants to be called again (undefined: not needed).
   */
  keep(ac: AgentComputer, becameReady: boolean): number | undefined {
    const endpoint = this.reachable(ac) ? ac.status?.endpoint : undefined;
    if (endpoint !== undefined && isPoolMemberIn(ac, PoolMemberStates.Available))
      return this.keepMember(ac, endpoint);
    this.opened.delete(keyOf(ac));
    if (endpoint !== undefined && becameReady) this.open(ac, endpoint);
    return undefined;
  }

  /** An available member: asked again once KEEP_OPEN_INTERVAL_MS passed since it was last asked. */
  private keepMember(ac: AgentComputer, endpoint: string): number {
    const key = keyOf(ac);
    const previous = this.opened.get(key);
    const now = this.now();
    if (previous?.endpoint !== endpoint || now - previous.at >= KEEP_OPEN_INTERVAL_MS) {
      this.opened.set(key, { endpoint, at: now });
      this.open(ac, endpoint);
    }
    return KEEP_OPEN_INTERVAL_MS - (now - (this.opened.get(key)?.at ?? now));
  }

  /** Resolves once every health check sent so far has been answered (or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.opening]);
  }

  /** The workspace is gone: nothing to keep for it. */
  forget(namespace: string, name: string): void {
    this.opened.delete(`${namespace}/${name}`);
  }

  private reachable(ac: AgentComputer): boolean {
    return (
      ac.metadata.deletionTimestamp === undefined &&
      ac.spec.operatingMode === 'Running' &&
      readyForCurrentSpec(ac)
    );
  }

  private open(ac: AgentComputer, endpoint: string): void {
    const client = new RunnerClient({ endpoint, token: this.options.tokenOf(ac) });
    const opening = client
      .ping()
      .catch((err: unknown) => {
        this.options.logger.debug(
          { err, agentComputer: ac.metadata.name, namespace: ac.metadata.namespace },
          'opening the connection to the runner failed; the next prompt opens its own',
        );
      })
      .finally(() => this.opening.delete(opening));
    this.opening.add(opening);
  }
}
