import { mkdir, rm } from 'node:fs/promises';
import type { AgentComputer } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { RunnerCommand } from './process/child.js';
import { RunnerSupervisor } from './process/supervisor.js';
import type { SupervisorSettings } from './process/supervisor.js';
import { workspacePaths } from './process/workspace.js';
import type { WorkloadContext, WorkloadObservation, WorkloadRuntime } from './types.js';

export type { RunnerCommand } from './process/child.js';

export interface ProcessRuntimeOptions {
  /** Workspaces live under `<dataDir>/workspaces/<namespace>/<name>`. */
  dataDir: string;
  /** How to start `agentry runner`, e.g. `{ command: process.execPath, args: ['dist/cli/main.js', 'runner'] }`. */
  runnerCommand: RunnerCommand;
  logger: Logger;
  /** Crash restarts: `initialMs` (200) doubling to `maxMs` (30 s); reset after `resetAfterMs` (60 s) healthy. */
  restartBackoff?: { initialMs: number; maxMs: number; resetAfterMs?: number };
  /** Called when a runner exits on its own or becomes healthy, so that the operator reconciles it. */
  onChange?: (namespace: string, name: string) => void;
  /** SIGTERM, then SIGKILL after this long. Default 10 s. */
  stopGraceMs?: number;
  /** A runner that has not printed its listening line (and answered) after this long is killed. Default 60 s. */
  startTimeoutMs?: number;
  /** Health check timeout. Default 2 s. */
  healthTimeoutMs?: number;
  /** How often an adopted runner (not a child of this process) is checked for life. Default 1 s. */
  livenessIntervalMs?: number;
  /** Extra environment for runners (AGENTRY_LOG_LEVEL...); the runner's own variables win. */
  env?: Record<string, string>;
}

/** Variables runners inherit from the operator; never its credentials (KUBECONFIG, API keys, AWS). */
const INHERITED_ENV = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * The `process` runtime (DESIGN.md §3, the embedded default): each agent computer's runner is a
 * child process of the operator working in `<dataDir>/workspaces/<namespace>/<name>/code`.
 * Hibernation stops the process and keeps the directory; a crashed runner is restarted with
 * exponential back-off; a changed `spec.restartedAt` (or token) redeploys; a restarted operator
 * adopts the live runners it finds in each workspace's `runner.json` instead of starting duplicates.
 *
 * `sandboxId` is `process-<name>`: stable across crashes and redeploys (a pid would churn the
 * status on every restart); the pid is in the observation's message and in runner.json.
 */
export class ProcessRuntime implements WorkloadRuntime {
  readonly name = 'process' as const;
  private readonly supervisors = new Map<string, RunnerSupervisor>();
  private readonly logger: Logger;
  private readonly settings: SupervisorSettings;
  private closed = false;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.logger = options.logger.child({ runtime: 'process' });
    const backoff = options.restartBackoff;
    this.settings = {
      runnerCommand: options.runnerCommand,
      env: { ...inheritedEnv(), ...options.env },
      backoff: {
        initialMs: backoff?.initialMs ?? 200,
        maxMs: backoff?.maxMs ?? 30_000,
        resetAfterMs: backoff?.resetAfterMs ?? 60_000,
      },
      stopGraceMs: options.stopGraceMs ?? 10_000,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
      healthTimeoutMs: options.healthTimeoutMs ?? 2000,
      livenessIntervalMs: options.livenessIntervalMs ?? 1000,
    };
  }

  async apply(
    ac: AgentComputer,
    context: WorkloadContext,
    signal: AbortSignal,
  ): Promise<WorkloadObservation> {
    const sandboxId = `process-${ac.metadata.name}`;
    return this.withSupervisor(ac, async (supervisor, code) => {
      await mkdir(code, { recursive: true });
      if (ac.spec.operatingMode === 'Hibernated') {
        await supervisor.stop();
        return {
          provisioned: true,
          running: false,
          ready: false,
          sandboxId,
          reason: 'Hibernated',
          message: 'runner stopped; working directory kept',
        };
      }
      await supervisor.ensureRunning(ac.spec.restartedAt, context.token);
      return { provisioned: true, sandboxId, ...(await supervisor.observe(context.token, signal)) };
    });
  }

  /** Stops the runner and deletes the workspace directory. */
  async remove(ac: AgentComputer): Promise<void> {
    await this.withSupervisor(ac, async (supervisor, _code, root, key) => {
      await supervisor.stop();
      await rm(root, { recursive: true, force: true });
      supervisor.removed = true;
      this.supervisors.delete(key);
      this.logger.info({ agentComputer: key }, 'workspace removed');
    });
  }

  /**
   * Stops supervising (operator shutdown). Runners keep running by default, to be adopted by the
   * next operator, as VMs and pods outlive an operator restart; `stopRunners` stops them too.
   */
  async close(options: { stopRunners?: boolean } = {}): Promise<void> {
    this.closed = true;
    await Promise.all([...this.supervisors.values()].map((s) => s.detach(options.stopRunners === true)));
  }

  private async withSupervisor<T>(
    ac: AgentComputer,
    work: (supervisor: RunnerSupervisor, code: string, root: string, key: string) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw new Error('the process runtime is closed');
    const { namespace, name } = ac.metadata;
    if (namespace === undefined) throw new Error(`agent computer ${name} has no namespace`);
    const paths = workspacePaths(this.options.dataDir, namespace, name);
    const key = `${namespace}/${name}`;
    for (;;) {
      let supervisor = this.supervisors.get(key);
      if (supervisor === undefined) {
        const logger = this.logger.child({ agentComputer: key });
        supervisor = new RunnerSupervisor(paths, this.settings, logger, () => {
          this.options.onChange?.(namespace, name);
        });
        this.supervisors.set(key, supervisor);
      }
      const current = supervisor;
      // A remove() that ran while this call waited made the supervisor obsolete: use a new one.
      const result = await current.run(async () =>
        current.removed
          ? { obsolete: true as const }
          : { value: await work(current, paths.code, paths.root, key) },
      );
      if (!('obsolete' in result)) return result.value;
    }
  }
}
