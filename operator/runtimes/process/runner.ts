import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../platform/log.js';
import { pidAlive, signalRunner } from './os.js';
import type { RunnerRecord } from './workspace.js';

/** One runner process, started by this operator or adopted from a previous one. */
export interface Runner {
  pid: number;
  /** Undefined when adopted: no exit event then, only polling tells that it died. */
  child: ChildProcess | undefined;
  /** Known once the runner has printed its listening line. */
  port: number | undefined;
  startedAt: string;
  /** The spec it was started for: a change of either means redeploy. */
  restartedAt: string | undefined;
  tokenDigest: string;
  /** Set before a deliberate stop, so that its exit is not taken for a crash. */
  stopping: boolean;
  exited: boolean;
  healthySince: number | undefined;
  /** Polls an adopted runner's pid. */
  liveness: NodeJS.Timeout | undefined;
}

export const digestOf = (token: string): string => createHash('sha256').update(token).digest('hex');

export const endpointOf = (port: number): string => `http://127.0.0.1:${port}`;

export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`;
}

export function runnerFromRecord(record: RunnerRecord, tokenDigest: string): Runner {
  return {
    pid: record.pid,
    child: undefined,
    port: record.port ?? undefined,
    startedAt: record.startedAt,
    restartedAt: record.restartedAt ?? undefined,
    tokenDigest,
    stopping: false,
    exited: false,
    healthySince: undefined,
    liveness: undefined,
  };
}

/** Whether the runner is gone within `timeoutMs`. */
export async function waitForExit(runner: Runner, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // A child is gone when its exit event came (its pid lingers until reaped); an adopted one when its pid is.
  const gone = () => runner.exited || (runner.child === undefined && !pidAlive(runner.pid));
  while (!gone()) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}

/** SIGTERM to the runner's process group, SIGKILL after `graceMs`; resolves once it is gone. */
export async function terminate(runner: Runner, graceMs: number, logger: Logger): Promise<void> {
  runner.stopping = true;
  signalRunner(runner.pid, 'SIGTERM');
  if (await waitForExit(runner, graceMs)) return;
  logger.warn({ runnerPid: runner.pid, graceMs }, 'runner ignored SIGTERM; killing it');
  signalRunner(runner.pid, 'SIGKILL');
  if (!(await waitForExit(runner, 5000))) throw new Error(`runner process ${runner.pid} survived SIGKILL`);
}
