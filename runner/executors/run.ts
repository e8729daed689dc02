import { spawn } from 'node:child_process';
import { writeExecutorLease } from './executor-lease.js';
import type { ChildProcess } from 'node:child_process';
import { access } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { executorEnv, substituteArgs, writePromptFile } from './args.js';
import { EventSink } from './event-sink.js';
import { createParser } from './formats/index.js';
import type { ExecutorFormat, OutputParser, ParserContext } from './formats/index.js';
import { readLines } from './line-reader.js';
import { terminateGroup } from './process-group.js';
import type { ExecutorEvent, ExecutorOutcome, ExecutorRun, RunExecutor } from './types.js';

export interface RunExecutorOptions {
  /** Between SIGTERM and SIGKILL of the executor's process group. Default 5 s. */
  killGraceMs?: number;
  /** Where PATH, HOME, LANG, TZ, TMPDIR and USER come from. Default `process.env`, read per run. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** How output is read. Default: the parser of the invocation's format (tests give their own). */
  createParser?: (format: ExecutorFormat, context: ParserContext) => OutputParser;
}

const DEFAULT_KILL_GRACE_MS = 5000;
/**
 * After the process group is gone its pipes normally close at once; a process that left the group
 * (setsid) may still hold them, and must not keep the prompt running, so reading stops after this.
 */
const PIPE_DRAIN_MS = 2000;
/** Output that keeps coming this long after the process exited comes from something that escaped it. */
const PIPE_DRAIN_LIMIT_MS = 120_000;
const STDERR_TAIL_CHARS = 500;

type Ending = 'canceled' | 'timeout';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Structural, not instanceof: errors from another realm (a vm context, a worker) must count too. */
function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

const errorEvent = (message: string): ExecutorEvent => ({ eventType: 'error', payload: { message } });

/** One run of one prompt: its process group, its pipes and how it ended. */
class Execution {
  private readonly parser: OutputParser;
  private readonly sink: EventSink;
  private ending: Ending | undefined;
  private stopping: Promise<void> | undefined;
  private lastStderr = '';
  private readFailure: { error: unknown } | undefined;
  private pipesAbandoned = false;
  /** When the last output line was read: output still queued in the pipes keeps the drain going. */
  private lastLineAt = Date.now();

  constructor(
    private readonly run: ExecutorRun,
    private readonly options: Required<RunExecutorOptions>,
  ) {
    const { invocation } = run;
    const shownCwd = run.shownCwd ?? run.cwd;
    this.parser = this.options.createParser(invocation.format, {
      cwd: shownCwd,
      executor: invocation.name,
      model: invocation.model,
    });
    this.sink = new EventSink((event) => run.onEvent(event), {
      eventType: 'init',
      payload: { cwd: shownCwd, executor: invocation.name, model: invocation.model ?? null },
    });
  }

  async execute(): Promise<ExecutorOutcome> {
    const { invocation, prompt, scratchDir, cwd } = this.run;
    // A CLI that announces itself gets to send the init; for the others it goes out before anything runs.
    if (!this.parser.providesInit) await this.sink.ensureInit();
    const promptFile = await writePromptFile(invocation, prompt, scratchDir);
    const args = substituteArgs(invocation.args, { prompt, promptFile, model: invocation.model });
    let child: ChildProcess;
    try {
      child = spawn(invocation.command, args, {
        cwd,
        env: executorEnv(this.options.baseEnv, invocation),
        detached: true,
        stdio: [invocation.promptVia === 'stdin' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      // Some failures (E2BIG: arguments over the kernel's limit) are thrown instead of emitted.
      return this.notStarted(err);
    }
    const spawnError = await spawned(child);
    if (spawnError !== undefined || child.pid === undefined) return this.notStarted(spawnError);
    return this.supervise(child, child.pid);
  }

  private async supervise(child: ChildProcess, pid: number): Promise<ExecutorOutcome> {
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve([code, signal]);
      });
    });
    // Awaited only at the end: output is read from now on. Best effort: without the note a runner
    // killed by SIGKILL cannot end this group after its restart.
    const lease = writeExecutorLease(this.run.scratchDir, pid).catch(() => undefined);
    const onAbort = (): void => {
      this.stop(pid, 'canceled');
    };
    this.run.signal.addEventListener('abort', onAbort, { once: true });
    if (this.run.signal.aborted) onAbort();
    const timer = setTimeout(() => {
      this.stop(pid, 'timeout');
    }, this.run.invocation.timeoutSeconds * 1000);
    try {
      this.writeStdin(child);
      const reading = this.readOutput(child, pid);
      const [code, signal] = await exited;
      // Whatever the prompt started in the background ends with it (and must, to close the pipes).
      await this.terminate(pid);
      await drain(
        child,
        reading,
        () => this.lastLineAt,
        () => {
          this.pipesAbandoned = true;
        },
      );
      return await this.finish({ code, signal });
    } finally {
      clearTimeout(timer);
      this.run.signal.removeEventListener('abort', onAbort);
      await lease;
    }
  }

  private writeStdin(child: ChildProcess): void {
    if (child.stdin === null) return;
    // A CLI that exits without reading its stdin makes the write fail with EPIPE: not our failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(this.run.prompt);
  }

  /** Reads both pipes; the promise never rejects (a failure stops the group and is kept for finish()). */
  private readOutput(child: ChildProcess, pid: number): Promise<void> {
    const onStderr = (line: string): Promise<void> => {
      this.lastLineAt = Date.now();
      if (line.trim() !== '') this.lastStderr = line.trim().slice(0, STDERR_TAIL_CHARS);
      return this.emitAll(this.parser.stderrLine(line));
    };
    const onStdout = (line: string): Promise<void> => {
      this.lastLineAt = Date.now();
      return this.emitAll(this.parser.stdoutLine(line));
    };
    const pipes: [Readable | null, (line: string) => Promise<void>][] = [
      [child.stdout, onStdout],
      [child.stderr, onStderr],
    ];
    const reading = pipes.map(async ([pipe, onLine]) => {
      if (pipe === null) return;
      try {
        await readLines(pipe, onLine);
      } catch (err) {
        // Destroyed by drain(): nothing was lost that anyone still wanted.
        if (this.pipesAbandoned) return;
        // A failing event log (or parser) stops the executor: going on would lose its events.
        this.readFailure ??= { error: err };
        this.stop(pid, undefined);
      }
    });
    return Promise.all(reading).then(() => undefined);
  }

  private async emitAll(events: ExecutorEvent[]): Promise<void> {
    await Promise.all(events.map((event) => this.sink.emit(event)));
  }

  /** Starts ending the group once; `reason` undefined when the runner itself gives up (event log failure). */
  private stop(pid: number, reason: Ending | undefined): void {
    this.ending ??= reason;
    // supervise() awaits the same promise and reports a failure; this copy must not be unhandled.
    this.terminate(pid).catch(() => undefined);
  }

  private terminate(pid: number): Promise<void> {
    this.stopping ??= terminateGroup(pid, this.options.killGraceMs);
    return this.stopping;
  }

  private async notStarted(err: unknown): Promise<ExecutorOutcome> {
    const message = await startProblem(this.run, err);
    await this.sink.emit(errorEvent(message));
    return { status: 'failed', error: message };
  }

  /** Asked only when a result goes out: the gateway has counted every call by now (docs/adr/0009). */
  private async meteredUsage(resultGoesOut: boolean): Promise<Record<string, unknown> | undefined> {
    if (!resultGoesOut || this.run.meteredUsage === undefined) return undefined;
    return this.run.meteredUsage();
  }

  private async finish(exit: Exit): Promise<ExecutorOutcome> {
    if (this.readFailure !== undefined) {
      const what =
        this.sink.failed === undefined ? 'reading the executor output' : 'recording an executor event';
      throw new Error(what, { cause: this.readFailure.error });
    }
    await this.sink.ensureInit();
    if (this.ending === 'canceled') return { status: 'canceled' };
    const parsed = this.parser.outcome();
    const finalResult = parsed.finalResult ?? '';
    const error =
      this.ending === 'timeout'
        ? `the prompt exceeded its time limit of ${this.run.invocation.timeoutSeconds}s`
        : (parsed.error ?? exitProblem(exit, this.lastStderr));
    const metered = await this.meteredUsage(error === undefined || parsed.reportedResult);
    const result: ExecutorEvent = {
      eventType: 'result',
      payload: resultPayload(finalResult, parsed.usage, metered),
    };
    if (error === undefined) {
      await this.sink.emit(result);
      return { status: 'succeeded', finalResult };
    }
    if (parsed.reportedResult) await this.sink.emit(result);
    // The parser already sent the CLI's own error as an event; any other failure is announced here.
    if (error !== parsed.error) await this.sink.emit(errorEvent(error));
    return parsed.reportedResult ? { status: 'failed', error, finalResult } : { status: 'failed', error };
  }
}

/** The `result` event: the answer, the CLI's own `usage`, and the model gateway's `metered` figures. */
function resultPayload(
  result: string,
  usage: Record<string, unknown> | undefined,
  metered: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return {
    result,
    ...(usage === undefined ? {} : { usage }),
    ...(metered === undefined ? {} : { metered }),
  };
}

/** Resolves with the spawn error, or undefined once the process runs. */
function spawned(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => {
    child.once('spawn', () => {
      resolve(undefined);
    });
    // Kept for the child's life: an 'error' without a listener would crash the runner.
    child.on('error', resolve);
  });
}

/**
 * Waits for both pipes to be read to their end. Output still queued when the process exited is read
 * in full (the runner makes each event durable before reading the next, so it can lag a fast
 * writer); only pipes that stay silent for PIPE_DRAIN_MS (held open by a process that escaped the
 * group) or still stream after PIPE_DRAIN_LIMIT_MS are given up.
 */
async function drain(
  child: ChildProcess,
  reading: Promise<void>,
  lastLineAt: () => number,
  abandon: () => void,
): Promise<void> {
  const finished = reading.then(() => true);
  const giveUpAt = Date.now() + PIPE_DRAIN_LIMIT_MS;
  for (;;) {
    const silentFor = Date.now() - lastLineAt();
    const wait = Math.max(1, Math.min(PIPE_DRAIN_MS - silentFor, giveUpAt - Date.now()));
    const timeout = new AbortController();
    const late = delay(wait, false, { signal: timeout.signal }).catch(() => false);
    const done = await Promise.race([finished, late]);
    timeout.abort();
    if (done) return;
    if (Date.now() - lastLineAt() >= PIPE_DRAIN_MS || Date.now() >= giveUpAt) break;
  }
  abandon();
  child.stdout?.destroy();
  child.stderr?.destroy();
  await reading;
}

function exitProblem(exit: Exit, lastStderr: string): string | undefined {
  if (exit.code === 0) return undefined;
  const how =
    exit.code === null ? `was killed by signal ${exit.signal ?? 'unknown'}` : `exited with code ${exit.code}`;
  return `executor ${how}${lastStderr === '' ? '' : `: ${lastStderr}`}`;
}

async function startProblem(run: ExecutorRun, err: unknown): Promise<string> {
  const { name, command } = run.invocation;
  const code = errorCode(err);
  if (code === 'ENOENT') {
    // spawn reports a missing working directory as ENOENT too.
    const cwdExists = await access(run.cwd).then(
      () => true,
      () => false,
    );
    if (!cwdExists) return `executor "${name}" cannot start: the working directory ${run.cwd} does not exist`;
    return `executor "${name}" is not installed in this workspace (command "${command}" not found on PATH)`;
  }
  if (code === 'EACCES') {
    return `executor "${name}" cannot start: command "${command}" is not executable (permission denied)`;
  }
  if (code === 'E2BIG') {
    // One argument is limited to 128 KiB: a long prompt belongs on stdin or in a file.
    return `executor "${name}" cannot start: its arguments are too long (pass the prompt via stdin or a file)`;
  }
  const detail =
    typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err);
  return `executor "${name}" cannot start: ${detail}`;
}

export function createRunExecutor(options: RunExecutorOptions = {}): RunExecutor {
  return async (run) => {
    if (run.signal.aborted) return { status: 'canceled' };
    const execution = new Execution(run, {
      killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      baseEnv: options.baseEnv ?? process.env,
      createParser: options.createParser ?? createParser,
    });
    return execution.execute();
  };
}

/** Runs one prompt with one executor (see RunExecutor for the contract). */
export const runExecutor: RunExecutor = createRunExecutor();
