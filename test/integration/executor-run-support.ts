// What the executor run tests share: real bash processes through the built-in `shell` executor.
// The agent CLIs are not faked here: their parsers are tested on documented samples in
// test/unit/executor-formats-*.test.ts.
import { afterEach } from '@jest/globals';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_EXECUTOR_DEFINITIONS, invocationOf } from '../../platform/executor-catalog.js';
import type { ExecutorDefinition } from '../../platform/executor-catalog.js';
import type { ExecutorInvocation } from '../../platform/runner-protocol.js';
import { createRunExecutor } from '../../runner/executors/run.js';
import type { ExecutorEvent, ExecutorOutcome } from '../../runner/executors/types.js';

const builtinShell = BUILTIN_EXECUTOR_DEFINITIONS.find((d) => d.name === 'shell');
if (builtinShell === undefined) throw new Error('the built-in shell executor is missing');
export const shell: ExecutorDefinition = builtinShell;

export const runExecutor = createRunExecutor({ killGraceMs: 300 });
const dirs: string[] = [];
export const pids = new Set<number>();

/** Kills what a test started and removes its directories after each test. */
export function cleanUpAfterEach(): void {
  afterEach(async () => {
    // Nothing a test started may outlive it, even when an assertion failed midway.
    for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
    pids.clear();
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
}

/** Whether `pid` runs: a zombie (dead, not yet reaped by PID 1) does not. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agentry-executor-')));
  dirs.push(dir);
  return dir;
}

export interface Started {
  events: ExecutorEvent[];
  outcome: Promise<ExecutorOutcome>;
  controller: AbortController;
  cwd: string;
}

export interface StartOptions {
  invocation?: Partial<ExecutorInvocation>;
  onEvent?: (event: ExecutorEvent) => Promise<void>;
  cwd?: string;
}

export async function start(prompt: string, options: StartOptions = {}): Promise<Started> {
  const cwd = options.cwd ?? (await tempDir());
  const scratchDir = await tempDir();
  const events: ExecutorEvent[] = [];
  const controller = new AbortController();
  const invocation = { ...invocationOf(shell, { timeoutSeconds: 60 }), ...options.invocation };
  const outcome = runExecutor({
    invocation,
    prompt,
    cwd,
    scratchDir,
    signal: controller.signal,
    onEvent: async (event) => {
      events.push(event);
      await options.onEvent?.(event);
    },
  });
  return { events, outcome, controller, cwd };
}

export async function run(
  prompt: string,
  options: StartOptions = {},
): Promise<{ events: ExecutorEvent[]; outcome: ExecutorOutcome }> {
  const started = await start(prompt, options);
  return { events: started.events, outcome: await started.outcome };
}

export const texts = (events: ExecutorEvent[], stream: string): unknown[] =>
  events.filter((e) => e.eventType === 'text' && e.payload.stream === stream).map((e) => e.payload.content);
export const ofType = (events: ExecutorEvent[], type: ExecutorEvent['eventType']): ExecutorEvent[] =>
  events.filter((e) => e.eventType === type);

/** Resolves with the first stdout line, once the script printed it. */
export async function firstLine(events: ExecutorEvent[]): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const line = texts(events, 'stdout')[0];
    if (typeof line === 'string') return line;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the script printed nothing within 5 s');
}
