import type { AgentComputer } from '../../../crds/index.js';
import type { InstallationKey } from '../../../platform/installation-key.js';
import { RunnerClient } from '../../../platform/runner-client.js';
import { ApiError } from '../../errors.js';

/** A port list this fresh is used again: a page loading fifty assets asks the runner once. */
const CACHE_MS = 2000;
const RUNNER_TIMEOUT_MS = 5000;

/**
 * The ports the workspace's own processes listen on, as its runner reports them (GET /v1/ports),
 * cached a couple of seconds per workspace. The proxy forwards only to these: in the process
 * runtime every workspace (and the API server) shares the host's network.
 */
export class WorkspacePorts {
  private readonly cache = new Map<string, { at: number; ports: Promise<readonly number[]> }>();

  constructor(private readonly installationKey: InstallationKey) {}

  /** Throws a 502 naming the port when nothing of the workspace listens on it. */
  async requireListening(ac: AgentComputer, endpoint: string, port: number): Promise<void> {
    const ports = await this.listening(ac, endpoint);
    if (!ports.includes(port))
      throw new ApiError(
        'bad_gateway',
        `Nothing in the workspace listens on port ${port}; start a server on it (0.0.0.0 or localhost) and retry`,
      );
  }

  private listening(ac: AgentComputer, endpoint: string): Promise<readonly number[]> {
    const key = `${ac.metadata.namespace ?? ''}/${ac.metadata.name}/${ac.metadata.uid ?? ''}`;
    const now = Date.now();
    const cached = this.cache.get(key);
    if (cached !== undefined && now - cached.at < CACHE_MS) return cached.ports;
    for (const [old, entry] of this.cache) if (now - entry.at >= CACHE_MS) this.cache.delete(old);
    const runner = new RunnerClient({
      endpoint,
      token: this.installationKey.runnerToken(ac),
      timeoutMs: RUNNER_TIMEOUT_MS,
    });
    const ports = runner.listeningPorts().catch((err: unknown) => {
      this.cache.delete(key);
      throw new ApiError(
        'bad_gateway',
        'The workspace cannot be reached; retry in a few seconds',
        undefined,
        {
          cause: err,
        },
      );
    });
    this.cache.set(key, { at: now, ports });
    return ports;
  }
}
