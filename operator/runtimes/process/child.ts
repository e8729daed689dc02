import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, open, rename } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { errnoOf } from '../../../platform/errno.js';
import type { WorkspacePaths } from './workspace.js';

/** How to start `agentry runner`: `node dist/cli/main.js runner`, or the TypeScript in tests. */
export interface RunnerCommand {
  command: string;
  args: string[];
  /**
   * When `command` wraps the program (a sandbox), the program itself: checked before spawning, so
   * that a missing one is a provision error as it is unwrapped, not a crash inside the wrapper.
   */
  wrapped?: string | undefined;
}

/** Fails as spawn would if the wrapped program cannot be executed (a name looked up on PATH is left to the wrapper). */
async function checkWrapped(command: RunnerCommand): Promise<void> {
  if (command.wrapped === undefined || !isAbsolute(command.wrapped)) return;
  try {
    await access(command.wrapped, constants.X_OK);
  } catch (err) {
    throw new Error(`cannot start the runner command "${command.wrapped}"`, { cause: err });
  }
}

/** The line `agentry runner` (cli/runner.ts) or `agentry lake` prints once it listens. */
const listeningLine = (program: string): RegExp =>
  new RegExp(`^agentry ${program} listening on http:\\/\\/(?:\\[[^\\]]+\\]|[^\\s:]+):(\\d+)$`);

/** Keeps the previous run's log (why did it crash?) and starts a fresh one. */
async function rotateLog(paths: WorkspacePaths): Promise<FileHandle> {
  try {
    await rename(paths.log, paths.previousLog);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') {
      throw new Error(`cannot rotate ${paths.log}`, { cause: err });
    }
  }
  return open(paths.log, 'a', 0o600);
}

/**
 * Starts the runner as the leader of its own process group (so stopping it takes its children
 * too, and it outlives an operator restart to be adopted), with stdout and stderr in the
 * workspace's log file rather than pipes: a pipe would break when the operator goes away.
 * Resolves once the process exists; `onExit` is attached before anything else can happen.
 */
export async function spawnRunner(options: {
  command: RunnerCommand;
  paths: WorkspacePaths;
  env: Record<string, string>;
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void;
}): Promise<ChildProcess & { pid: number }> {
  await checkWrapped(options.command);
  const log = await rotateLog(options.paths);
  let child: ChildProcess;
  let started: Promise<void>;
  try {
    child = spawn(options.command.command, options.command.args, {
      cwd: options.paths.code,
      env: options.env,
      stdio: ['ignore', log.fd, log.fd],
      detached: true,
    });
    // Synchronously: 'spawn' and 'error' are emitted on the next tick.
    child.once('exit', options.onExit);
    started = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => {
        reject(new Error(`cannot start the runner command "${options.command.command}"`, { cause: err }));
      });
    });
    // Handled below, after the log is closed; until then the rejection must not count as unhandled.
    started.catch(() => undefined);
  } finally {
    await log.close(); // the child has its own copy of the descriptor
  }
  await started;
  // The operator must be able to exit while runners keep going (they are adopted on its return).
  child.unref();
  const { pid } = child;
  if (pid === undefined) throw new Error('the runner process has no pid although it started');
  return Object.assign(child, { pid });
}

/**
 * Reads a runner's log as it grows, looking for the listening line. Incremental: each `scan()`
 * reads only what was appended since the last one.
 */
export class ListeningLineScanner {
  private offset = 0;
  private partial = '';
  private handle: FileHandle | undefined;
  private readonly line: RegExp;

  /** `program`: the `agentry` command whose listening line to look for. */
  constructor(
    private readonly path: string,
    program: 'runner' | 'lake' = 'runner',
  ) {
    this.line = listeningLine(program);
  }

  /** The port, once the line has been printed. */
  async scan(): Promise<number | undefined> {
    this.handle ??= await open(this.path, 'r');
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, this.offset);
      if (bytesRead === 0) return undefined;
      this.offset += bytesRead;
      const lines = (this.partial + buffer.toString('utf8', 0, bytesRead)).split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) {
        const port = this.line.exec(line.trim())?.[1];
        if (port !== undefined) return Number(port);
      }
    }
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }
}

/** The last non-empty line of a runner's log, to say why it exited before listening. */
export async function lastLogLine(path: string): Promise<string | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, 4096);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const lines = buffer
      .toString('utf8')
      .split('\n')
      .map((line) => line.trim());
    return lines
      .filter((line) => line !== '')
      .pop()
      ?.slice(0, 500);
  } catch {
    return undefined; // the log is a courtesy; its absence explains nothing
  } finally {
    await handle?.close();
  }
}
