import { mkdir, rm } from 'node:fs/promises';
import type { Logger } from '../../platform/log.js';
import type { ProcessIsolation } from '../../platform/config.js';
import { WorkloadConfinement } from './process/confinement.js';
import type { RunnerCommand } from './process/child.js';
import { RunnerSupervisor } from './process/supervisor.js';
import type { SupervisorSettings } from './process/supervisor.js';
import { workloadPaths } from './process/workspace.js';
import { warmUpEnvironment } from './program-layout.js';
import type { WorkspacePaths } from './process/workspace.js';
import { ObservationReasons, workloadProgram } from './types.js';
import type {
  WorkloadContext,
  WorkloadObject,
  WorkloadObservation,
  WorkloadProgram,
  WorkloadRuntime,
} from './types.js';

export type { RunnerCommand } from './process/child.js';

export interface ProcessRuntimeOptions {
  /** Workspaces live under `<dataDir>/workspaces/<namespace>/<name>`, lakes under `<dataDir>/lakes/...`. */
  dataDir: string;
  /** How to start `agentry runner`, e.g. `{ command: process.execPath, args: ['dist/cli/main.js', 'runner'] }`. */
  runnerCommand: RunnerCommand;
  /** How to start `agentry lake`; without it, context lakes cannot run in this runtime. */
  lakeCommand?: RunnerCommand | undefined;
  /**
   * Extra environment for lake servers only (AGENTRY_LAKE_CONNECTORS...), or a function of the
   * lake's namespace (its organization's file roots).
   */
  lakeEnv?: Record<string, string> | ((namespace: string) => Record<string, string>) | undefined;
  logger: Logger;
  /** Crash restarts: `initialMs` (200) doubling to `maxMs` (30 s); reset after `resetAfterMs` (60 s) healthy. */
  restartBackoff?: { initialMs: number; maxMs: number; resetAfterMs?: number };
  /**
   * Called when a process exits on its own or becomes healthy, so that the operator reconciles the
   * resource it runs for (`program` says which kind: `runner` an AgentComputer, `lake` a ContextLake).
   */
  onChange?: (namespace: string, name: string, program: WorkloadProgram['name']) => void;
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
  /**
   * `bubblewrap` (default): each runner and lake server sees only its own directory and read-only
   * system files, and none starts where bwrap cannot run; `none`: unconfined (single-tenant).
   */
  isolation?: ProcessIsolation;
  /** The bwrap program (default `bwrap` on PATH). */
  bubblewrap?: string;
  /** Directories every confined program may read besides the system ones and the agentry code. */
  readOnlyPaths?: readonly string[];
  /** Directories one namespace's confined lake server may read (its `file://` datasets). */
  lakeReadOnlyPaths?: (namespace: string) => readonly string[];
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

/** The runtime's confinement, bubblewrap unless the options turn it off. */
const confinementOf = (options: ProcessRuntimeOptions, logger: Logger): WorkloadConfinement =>
  new WorkloadConfinement({
    isolation: options.isolation ?? 'bubblewrap',
    bubblewrap: options.bubblewrap ?? 'bwrap',
    dataDir: options.dataDir,
    readOnlyPaths: options.readOnlyPaths ?? [],
    lakeReadOnlyPaths: options.lakeReadOnlyPaths ?? (() => []),
    logger,
  });

/**
 * The `process` runtime (docs/architecture.md#runtimes, the embedded default): each agent computer's runner is a
 * child process of the operator working in `<dataDir>/workspaces/<namespace>/<name>/code`, each
 * context lake's server one working in `<dataDir>/lakes/<namespace>/<name>/data`.
 * Hibernation stops the process and keeps the directory; a crashed runner is restarted with
 * exponential back-off; a changed `spec.restartedAt` (or token) redeploys; a restarted operator
 * adopts the live runners it finds in each workspace's `runner.json` instead of starting duplicates.
 *
 * `sandboxId` is `process-<name>`: stable across crashes and redeploys (a pid would churn the
 * status on every restart); the pid is in the observation's message and in runner.json.
 */
export class ProcessRuntime implements WorkloadRuntime {
  readonly name = 'process' as const;
  /** A local process and its directory: only remove(), held for by the finalizer, ends them. */
  readonly collectedByOwnerReferences = false;
  private readonly supervisors = new Map<string, RunnerSupervisor>();
  private readonly logger: Logger;
  private readonly settings: Omit<SupervisorSettings, 'program' | 'runnerCommand'>;
  private readonly confinement: WorkloadConfinement;
  private closed = false;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.logger = options.logger.child({ runtime: 'process' });
    const backoff = options.restartBackoff;
    this.settings = {
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
    this.confinement = confinementOf(options, this.logger);
  }

  async apply(
    object: WorkloadObject,
    context: WorkloadContext,
    signal: AbortSignal,
  ): Promise<WorkloadObservation> {
    const program = workloadProgram(object);
    if (program.name === 'lake' && this.options.lakeCommand === undefined)
      throw new Error('the process runtime has no lake command: it cannot run context lakes');
    // A lake's name is fixed per namespace, so its sandbox names the program too.
    const sandboxId = `process-${object.metadata.name}${program.name === 'runner' ? '' : `-${program.name}`}`;
    return this.withSupervisor(object, async (supervisor, paths) => {
      await mkdir(paths.code, { recursive: true });
      if (object.spec.operatingMode === 'Hibernated') {
        await supervisor.stop();
        return {
          provisioned: true,
          running: false,
          ready: false,
          sandboxId,
          reason: ObservationReasons.Hibernated,
          message: `${program.noun} stopped; working directory kept`,
        };
      }
      const refusal = await this.confinement.refusal();
      if (refusal !== undefined) return { sandboxId, ...refusal };
      await this.confinement.prepare(paths, program);
      await supervisor.ensureRunning(object.spec.restartedAt, context.token);
      return { provisioned: true, sandboxId, ...(await supervisor.observe(context.token, signal)) };
    });
  }

  /** Stops the process and deletes the workload's directory. */
  async remove(object: WorkloadObject): Promise<void> {
    await this.withSupervisor(object, async (supervisor, paths, key) => {
      await supervisor.stop();
      await rm(paths.root, { recursive: true, force: true });
      supervisor.removed = true;
      this.supervisors.delete(key);
      this.logger.info({ workload: key }, 'workload directory removed');
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

  /**
   * The supervisor settings of a program: its command, and for the lake its own environment.
   * Without a lake command apply() refuses lakes; remove() still stops and deletes what exists.
   */
  private settingsOf(object: WorkloadObject, paths: WorkspacePaths, namespace: string): SupervisorSettings {
    const program = workloadProgram(object);
    const confined = (command: RunnerCommand) => this.confinement.command(command, paths, program, namespace);
    if (program.name === 'runner')
      return {
        ...this.settings,
        program,
        runnerCommand: confined(this.options.runnerCommand),
        env: { ...this.settings.env, ...warmUpEnvironment(object) },
      };
    const { lakeEnv } = this.options;
    return {
      ...this.settings,
      program,
      runnerCommand: confined(this.options.lakeCommand ?? { command: 'agentry', args: ['lake'] }),
      env: { ...this.settings.env, ...(typeof lakeEnv === 'function' ? lakeEnv(namespace) : lakeEnv) },
    };
  }

  private async withSupervisor<T>(
    object: WorkloadObject,
    work: (supervisor: RunnerSupervisor, paths: WorkspacePaths, key: string) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw new Error('the process runtime is closed');
    const program = workloadProgram(object);
    const { namespace, name } = object.metadata;
    if (namespace === undefined) throw new Error(`${object.kind} ${name} has no namespace`);
    const paths = workloadPaths(this.options.dataDir, program, namespace, name);
    const key = `${program.kind}/${namespace}/${name}`;
    for (;;) {
      let supervisor = this.supervisors.get(key);
      if (supervisor === undefined) {
        const logger = this.logger.child({ workload: key });
        supervisor = new RunnerSupervisor(paths, this.settingsOf(object, paths, namespace), logger, () => {
          this.options.onChange?.(namespace, name, program.name);
        });
        this.supervisors.set(key, supervisor);
      }
      const current = supervisor;
      // A remove() that ran while this call waited made the supervisor obsolete: use a new one.
      const result = await current.run(async () =>
        current.removed ? { obsolete: true as const } : { value: await work(current, paths, key) },
      );
      if (!('obsolete' in result)) return result.value;
    }
  }
}
