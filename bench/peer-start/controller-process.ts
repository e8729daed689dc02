// A controller as a process of its own: started, waited on until it is up, its usage read, stopped.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { processUsage } from './process-usage.js';
import type { ProcessUsage } from './process-usage.js';

export interface ControllerProcess {
  /** Usage since the process started. */
  usage(): Promise<ProcessUsage>;
  stop(): Promise<void>;
}

/** Starts `command`; resolves once a line of its output matches `up` (its log says it runs). */
export async function startController(
  label: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  up: RegExp,
  timeoutMs = 60_000,
): Promise<ControllerProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const started = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      tail = (tail + chunk.toString()).slice(-4000);
      if (up.test(tail)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      reject(new Error(`${label} exited with ${String(code)}: ${tail}`));
    });
  });
  const timeout = sleep(timeoutMs).then(() => {
    throw new Error(`${label} did not start within ${timeoutMs} ms: ${tail}`);
  });
  try {
    await Promise.race([started, timeout]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const pid = child.pid ?? 0;
  return { usage: () => processUsage(pid), stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(forced);
}
