import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../platform/log.js';
import { ObservationReasons } from '../types.js';
import type { WorkloadObservation, WorkloadProgram } from '../types.js';
import { Backoff } from './backoff.js';
import type { BackoffOptions } from './backoff.js';
import { describeError } from '../../../platform/describe-error.js';
import { ListeningLineScanner, lastLogLine, spawnRunner } from './child.js';
import type { RunnerCommand } from './child.js';
import { probeRunnerHealth } from './health.js';
import { pidAlive, runnerIdentity, signalRunner } from './os.js';
import { describeExit, digestOf, endpointOf, runnerFromRecord, terminate } from './runner.js';
import type { Runner } from './runner.js';
import { deleteRunnerRecord, processEnvironment, readRunnerRecord, writeRunnerRecord } from './workspace.js';
import type { WorkspacePaths } from './workspace.js';

export interface SupervisorSettings {
  /** What runs: the runner of an agent computer, or the lake server of a context lake. */
  program: WorkloadProgram;
  /** How to start it (`agentry runner`, `agentry lake`). */
  runnerCommand: RunnerCommand;
  /** Environment every process gets besides its own AGENTRY_RUNNER_* or AGENTRY_LAKE_* variables. */
  env: Record<string, string>;
  backoff: BackoffOptions;
  stopGraceMs: number;
  startTimeoutMs: number;
  healthTimeoutMs: number;
  livenessIntervalMs: number;
}

type Observation = Omit<WorkloadObservation, 'provisioned' | 'sandboxId'>;

/**
 * Keeps one workspace's runner in the state the last apply() asked for: started, adopted after an
 * operator restart, restarted with back-off after a crash, redeployed, stopped. Operations run one
 * at a time through `run()`; exit events and timers update the state in between.
 */
export class RunnerSupervisor {
  /** Set by remove(): a caller that waited for this supervisor must use a new one. */
  removed = false;
  private runner: Runner | undefined;
  private wanted = false;
  /** What the last apply() asked for; crash restarts start the same. */
  private desired: { restartedAt: string | undefined; token: string } | undefined;
  /** False until a runner recorded by a previous operator has been adopted or stopped. */
  private recordChecked = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartDueAt: number | undefined;
  /** Why the last runner died, shown while its restart waits. */
  private lastFailure: string | undefined;
  /** The runner command itself cannot be executed: nothing improves without a change. */
  private spawnError: string | undefined;
  private detached = false;
  private readonly backoff: Backoff;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly paths: WorkspacePaths,
    private readonly settings: SupervisorSettings,
    private readonly logger: Logger,
    private readonly notify: () => void,
  ) {
    this.backoff = new Backoff(settings.backoff);
  }

  /** Runs `work` after every earlier operation on this workspace has finished. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Converges to a running runner started for this restartedAt and token (call inside run()). */
  async ensureRunning(restartedAt: string | undefined, token: string): Promise<void> {
    this.wanted = true;
    const previous = this.desired;
    this.desired = { restartedAt, token };
    if (!this.recordChecked) await this.adoptOrStopRecorded(token);
    const current = this.runner;
    if (
      current !== undefined &&
      (current.restartedAt !== restartedAt || current.tokenDigest !== digestOf(token))
    ) {
      this.logger.info({ runnerPid: current.pid }, 'redeploying the runner');
      await this.stopRunner(current);
      this.cancelRestart();
      this.backoff.reset();
    }
    // A redeploy (or a new token) while a crash restart waits: no reason to keep waiting.
    const changed =
      previous !== undefined && (previous.restartedAt !== restartedAt || previous.token !== token);
    if (this.runner === undefined && changed) {
      this.cancelRestart();
      this.backoff.reset();
    }
    if (this.runner === undefined && this.restartTimer === undefined)
      await this.startRunner(restartedAt, token);
  }

  /** Stops the runner (hibernate, remove) and forgets it; the directory stays (call inside run()). */
  async stop(): Promise<void> {
    this.wanted = false;
    this.cancelRestart();
    this.backoff.reset();
    this.lastFailure = undefined;
    this.spawnError = undefined;
    if (this.runner !== undefined) await this.stopRunner(this.runner);
    else if (!this.recordChecked) await this.adoptOrStopRecorded(undefined);
    await deleteRunnerRecord(this.paths.record);
  }

  /**
   * Stops supervising (operator shutdown): no more restarts or notifications. The runner keeps
   * running unless `stopRunner`, to be adopted by the next operator.
   */
  async detach(stopRunner: boolean): Promise<void> {
    this.detached = true;
    this.cancelRestart();
    const runner = this.runner;
    if (runner === undefined) return;
    clearInterval(runner.liveness);
    if (stopRunner) await this.run(() => this.stopRunner(runner));
  }

  /** What the runner is doing now; probes its health check when it listens (call inside run()). */
  async observe(token: string, signal: AbortSignal): Promise<Observation> {
    const runner = this.runner;
    if (runner === undefined) {
      const inMs = Math.max(0, (this.restartDueAt ?? Date.now()) - Date.now());
      const why = this.lastFailure ?? `the ${this.settings.program.noun} is not running`;
      return {
        running: false,
        ready: false,
        provisionError: this.spawnError,
        reason: ObservationReasons.RestartBackoff,
        message: `${why}; restarting in ${inMs} ms`,
      };
    }
    const what = `${this.settings.program.noun} process ${runner.pid}`;
    if (runner.port === undefined) {
      return {
        running: true,
        ready: false,
        reason: ObservationReasons.Starting,
        message: `${what} is starting`,
      };
    }
    const endpoint = endpointOf(runner.port);
    const health = await probeRunnerHealth(endpoint, token, {
      timeoutMs: this.settings.healthTimeoutMs,
      signal,
    });
    if (!health.ok) {
      signal.throwIfAborted(); // the operator is shutting down: no verdict rather than a wrong one
      const reason =
        runner.healthySince === undefined ? ObservationReasons.Starting : ObservationReasons.Unhealthy;
      return { running: true, ready: false, endpoint, reason, message: `${what}: ${health.problem}` };
    }
    runner.healthySince ??= Date.now();
    const reason = this.settings.program.readyReason;
    return { running: true, ready: true, endpoint, reason, message: `${what} is ready` };
  }

  /**
   * After an operator restart: a recorded runner that is alive, still ours and answers its health
   * check with this token is adopted; one that is alive but does not answer (or that should not
   * run: `token` undefined) is stopped. A pid now used by another program is left alone.
   */
  private async adoptOrStopRecorded(token: string | undefined): Promise<void> {
    this.recordChecked = true;
    const record = await readRunnerRecord(this.paths.record);
    if (record === undefined || !pidAlive(record.pid)) return;
    const log = this.logger.child({ runnerPid: record.pid });
    const { identity } = processEnvironment(this.settings.program, this.paths);
    if ((await runnerIdentity(record.pid, this.paths.code, identity)) === 'other') {
      log.info('the recorded runner pid now belongs to another process; leaving it alone');
      return;
    }
    const runner = runnerFromRecord(record, token === undefined ? '' : digestOf(token));
    if (token !== undefined && record.port !== null) {
      const health = await probeRunnerHealth(endpointOf(record.port), token, {
        timeoutMs: this.settings.healthTimeoutMs,
      });
      if (health.ok) {
        runner.healthySince = Date.now();
        this.runner = runner;
        runner.liveness = this.watchLiveness(runner);
        log.info({ port: record.port }, 'adopted a running runner');
        return;
      }
      log.warn({ problem: health.problem }, 'the recorded runner does not answer; stopping it');
    }
    await this.stopRunner(runner);
  }

  /** An adopted runner is not our child: no exit event, so its pid is polled. */
  private watchLiveness(runner: Runner): NodeJS.Timeout {
    const timer = setInterval(() => {
      if (!pidAlive(runner.pid)) this.handleExit(runner, 'exited');
    }, this.settings.livenessIntervalMs);
    timer.unref();
    return timer;
  }

  private async startRunner(restartedAt: string | undefined, token: string): Promise<void> {
    const holder: { runner?: Runner } = {};
    let child: Awaited<ReturnType<typeof spawnRunner>>;
    try {
      child = await spawnRunner({
        command: this.settings.runnerCommand,
        paths: this.paths,
        env: {
          ...this.settings.env,
          [`${this.settings.program.envPrefix}TOKEN`]: token,
          ...processEnvironment(this.settings.program, this.paths).env,
        },
        onExit: (code, signal) => {
          if (holder.runner !== undefined) this.handleExit(holder.runner, describeExit(code, signal));
        },
      });
    } catch (err) {
      this.spawnError = describeError(err);
      this.lastFailure = this.spawnError;
      this.logger.error({ err }, 'cannot start the runner');
      this.scheduleRestart(0);
      return;
    }
    this.spawnError = undefined;
    const runner: Runner = {
      ...runnerFromRecord(
        { pid: child.pid, port: null, startedAt: new Date().toISOString(), restartedAt: restartedAt ?? null },
        digestOf(token),
      ),
      child,
    };
    holder.runner = runner;
    this.runner = runner;
    if (child.exitCode !== null || child.signalCode !== null) {
      this.handleExit(runner, describeExit(child.exitCode, child.signalCode)); // gone already
      return;
    }
    this.logger.info({ runnerPid: runner.pid }, 'runner started');
    await this.record(runner);
    void this.watchStartup(runner, token);
  }

  private async record(runner: Runner): Promise<void> {
    try {
      await writeRunnerRecord(this.paths.record, {
        pid: runner.pid,
        port: runner.port ?? null,
        startedAt: runner.startedAt,
        restartedAt: runner.restartedAt ?? null,
      });
    } catch (err) {
      // Only adoption after an operator restart depends on it; the runner itself is fine.
      this.logger.warn({ err }, 'cannot record the runner');
    }
  }

  /** Waits for the listening line, records the port, then waits for the first good health check. */
  private async watchStartup(runner: Runner, token: string): Promise<void> {
    const log = this.logger.child({ runnerPid: runner.pid });
    const deadline = Date.now() + this.settings.startTimeoutMs;
    const scanner = new ListeningLineScanner(this.paths.log, this.settings.program.name);
    try {
      while (runner.port === undefined && !runner.exited && !this.detached) {
        runner.port = await scanner.scan();
        if (runner.port !== undefined) break;
        if (Date.now() > deadline) {
          this.lastFailure = `${this.settings.program.noun} process ${runner.pid} did not listen within ${this.settings.startTimeoutMs} ms`;
          log.error(this.lastFailure);
          signalRunner(runner.pid, 'SIGKILL'); // its exit schedules the restart
          return;
        }
        await sleep(50);
      }
      if (runner.port === undefined || runner.exited) return;
      await this.run(async () => {
        if (this.runner === runner && !runner.exited) await this.record(runner);
      });
      await this.awaitHealthy(runner, endpointOf(runner.port), token, deadline);
    } catch (err) {
      log.error({ err }, 'watching the runner start failed');
    } finally {
      await scanner.close();
    }
  }

  private async awaitHealthy(
    runner: Runner,
    endpoint: string,
    token: string,
    deadline: number,
  ): Promise<void> {
    while (!runner.exited && !this.detached && Date.now() < deadline) {
      const health = await probeRunnerHealth(endpoint, token, { timeoutMs: this.settings.healthTimeoutMs });
      if (health.ok) {
        runner.healthySince ??= Date.now();
        this.logger.info({ runnerPid: runner.pid, endpoint }, 'runner is ready');
        this.notify();
        return;
      }
      await sleep(100);
    }
  }

  /** A runner ended. Deliberate stops end here quietly; anything else is a crash to restart. */
  private handleExit(runner: Runner, how: string): void {
    if (runner.exited) return; // a child's exit event and stopRunner() may both report it
    runner.exited = true;
    clearInterval(runner.liveness);
    if (this.runner !== runner) return;
    this.runner = undefined;
    if (runner.stopping || this.detached) return;
    const healthyFor = runner.healthySince === undefined ? 0 : Date.now() - runner.healthySince;
    this.lastFailure = `${this.settings.program.noun} process ${runner.pid} ${how}`;
    // Synchronously, so that no apply() in between starts a runner without the back-off.
    if (this.wanted) this.scheduleRestart(healthyFor);
    void this.reportCrash(runner);
  }

  private async reportCrash(runner: Runner): Promise<void> {
    if (runner.port === undefined) {
      const line = await lastLogLine(this.paths.log);
      if (line !== undefined)
        this.lastFailure = `${this.lastFailure ?? `${this.settings.program.noun} exited`} before listening: ${line}`;
    }
    const restartInMs = this.restartDueAt === undefined ? undefined : this.restartDueAt - Date.now();
    this.logger.warn({ runnerPid: runner.pid, restartInMs }, this.lastFailure ?? 'runner exited');
    this.notify();
  }

  private scheduleRestart(healthyForMs: number): void {
    this.cancelRestart();
    if (this.detached) return;
    const delay = this.backoff.next(healthyForMs);
    this.restartDueAt = Date.now() + delay;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restartDueAt = undefined;
      this.run(async () => {
        const desired = this.desired;
        if (!this.wanted || this.runner !== undefined || this.removed || this.detached) return;
        if (desired !== undefined) await this.startRunner(desired.restartedAt, desired.token);
      }).catch((err: unknown) => {
        this.logger.error({ err }, 'restarting the runner failed');
      });
    }, delay);
    this.restartTimer.unref();
  }

  private cancelRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.restartDueAt = undefined;
  }

  private async stopRunner(runner: Runner): Promise<void> {
    try {
      await terminate(runner, this.settings.stopGraceMs, this.logger);
    } catch (err) {
      throw new Error(`cannot stop the runner of ${this.paths.root}`, { cause: err });
    }
    this.handleExit(runner, 'stopped');
  }
}
