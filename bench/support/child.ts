// Child processes a benchmark reads line by line: floors (a bare spawn, a pipe), runs of itself.
import { spawn } from 'node:child_process';

/** Wall clock in ms with sub-ms resolution, comparable with Python's time.time_ns() / 1e6. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export interface SpawnLinesOptions {
  signal?: AbortSignal;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The child's stderr: passed through (default) or dropped. */
  stderr?: 'inherit' | 'ignore';
  /** Once `onLine` says 'stop': SIGTERM the child, and its exit, however it ends, is a success. */
  killOnStop?: boolean;
}

/**
 * Spawns `command` and calls `onLine(line, arrival)` for each stdout line, `arrival` the wallMs() its
 * chunk came in at; 'stop' ends the reading. Resolves when the child exits 0 (or was stopped with
 * `killOnStop`), rejects otherwise.
 */
export function spawnLines(
  command: string,
  args: string[],
  onLine: (line: string, arrival: number) => 'stop' | undefined,
  options: SpawnLinesOptions = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', options.stderr ?? 'inherit'],
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    let rest = '';
    let stopped = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const arrival = wallMs();
      if (stopped) return;
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (onLine(line, arrival) === 'stop') {
          stopped = true;
          if (options.killOnStop === true) child.kill('SIGTERM');
          break;
        }
      }
    });
    child.once('error', reject);
    child.once('close', (code, how) => {
      if (code === 0 || (stopped && options.killOnStop === true)) resolve();
      else
        reject(
          new Error(`${command} ${how === null ? `exited with ${String(code)}` : `was killed by ${how}`}`),
        );
    });
  });
}
