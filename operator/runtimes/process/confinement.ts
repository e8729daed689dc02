import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Logger } from '../../../platform/log.js';
import type { ProcessIsolation } from '../../../platform/config.js';
import type { WorkloadObservation, WorkloadProgram } from '../types.js';
import { ProvisionFailureReasons } from '../types.js';
import type { RunnerCommand } from './child.js';
import { agentryPackageRoot, codePaths } from './sandbox-layout.js';
import { confinedCommand, workloadSandboxPlan } from './sandbox.js';
import { ISOLATION_UNAVAILABLE_MESSAGE, probeBubblewrap } from './sandbox-probe.js';
import type { SandboxProbe } from './sandbox-probe.js';
import type { SandboxPlan } from './sandbox.js';
import type { WorkspacePaths } from './workspace.js';

export interface ConfinementOptions {
  isolation: ProcessIsolation;
  /** The bwrap program: a name looked up on PATH, or a path. */
  bubblewrap: string;
  dataDir: string;
  /** Read-only for every confined program besides the system directories and the agentry code. */
  readOnlyPaths: readonly string[];
  /** Read-only for one namespace's lake server only (where its `file://` datasets may be). */
  lakeReadOnlyPaths: (namespace: string) => readonly string[];
  logger: Logger;
}

/**
 * How the process runtime confines what it starts (docs/adr/0005-process-isolation-bubblewrap.md):
 * wraps each workload's command in bubblewrap, and refuses to start any (fail closed) while
 * bubblewrap cannot run here. `none` starts commands as they are, after one warning.
 */
export class WorkloadConfinement {
  private available: Promise<SandboxProbe> | undefined;
  private code: string[] | undefined;
  /** The last probe failure logged: each reconcile asks again, the log says it once. */
  private loggedProblem: string | undefined;

  constructor(private readonly options: ConfinementOptions) {
    if (options.isolation === 'none')
      options.logger.warn(
        'AGENTRY_PROCESS_ISOLATION=none: workspaces and lake servers run unconfined and can read the ' +
          'data directory (other organizations\u2019 workspaces, artifacts and secrets): single-tenant use only',
      );
  }

  /**
   * Undefined when workloads can start; else the observation that says why not. A failed probe is
   * tried again on the next call (bwrap may have been installed since); a good one is kept.
   */
  async refusal(): Promise<WorkloadObservation | undefined> {
    if (this.options.isolation === 'none') return undefined;
    this.available ??= probeBubblewrap(this.options.bubblewrap);
    const probe = await this.available;
    if (probe.ok) return undefined;
    this.available = undefined;
    if (probe.problem !== this.loggedProblem)
      this.options.logger.error({ problem: probe.problem }, 'bubblewrap cannot run: no workload is started');
    this.loggedProblem = probe.problem;
    const reason = ProvisionFailureReasons.IsolationUnavailable;
    const message = ISOLATION_UNAVAILABLE_MESSAGE;
    return {
      provisioned: false,
      running: false,
      ready: false,
      provisionError: message,
      provisionErrorReason: reason,
      reason,
      message,
    };
  }

  /** Creates what the sandbox binds (home and temporary directories, the runner's state). */
  async prepare(paths: WorkspacePaths, program: WorkloadProgram): Promise<void> {
    if (this.options.isolation === 'none') return;
    const plan = workloadSandboxPlan({ paths, program: program.name, dataDir: this.dataDir, readOnly: [] });
    await Promise.all([...plan.writable, plan.home, plan.tmp].map((dir) => mkdir(dir, { recursive: true })));
  }

  /** The command that starts `command` confined to the workload's directories. */
  command(
    command: RunnerCommand,
    paths: WorkspacePaths,
    program: WorkloadProgram,
    namespace: string,
  ): RunnerCommand {
    if (this.options.isolation === 'none') return command;
    return confinedCommand(command, this.planOf(paths, program, namespace), this.options.bubblewrap);
  }

  private get dataDir(): string {
    return resolve(this.options.dataDir);
  }

  private planOf(paths: WorkspacePaths, program: WorkloadProgram, namespace: string): SandboxPlan {
    this.code ??= codePaths(agentryPackageRoot());
    const extra = program.name === 'lake' ? this.options.lakeReadOnlyPaths(namespace) : [];
    return workloadSandboxPlan({
      paths,
      program: program.name,
      dataDir: this.dataDir,
      readOnly: [...this.code, ...this.options.readOnlyPaths, ...extra],
    });
  }
}
