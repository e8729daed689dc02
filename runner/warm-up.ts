import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../platform/log.js';
import {
  TaskEventSchema,
  isTerminalPromptStatus,
  RunnerPromptStatusSchema,
} from '../platform/runner-protocol.js';
import type { DispatchPromptRequest, ExecutorInvocation } from '../platform/runner-protocol.js';
import type { RunExecutor } from './executors/types.js';
import { createRunnerApp, listenRunner } from './server.js';
import { RunnerState } from './state.js';

/** The warm-up's task id inside its throw-away runner (never the real runner's). */
export const WARM_UP_TASK_ID = 'warm-up';
/** A warm-up that has not ended by then is abandoned: the runner serves unwarmed. */
const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Prompts the warm-up runs, one after another: V8 optimizes a function only after it has run a few
 * times, so a runner warmed by one prompt still runs its first real one partly unoptimized.
 */
export const WARM_UP_PROMPTS = 3;

/**
 * What a dispatch of the built-in `shell` executor carries (bash runs the prompt from a file, its
 * output read as lines), plus agent instructions, so that the warm-up writes an instructions file
 * as an agent executor's prompt does.
 */
const WARM_UP_INVOCATION: ExecutorInvocation = {
  name: 'shell',
  format: 'lines',
  command: 'bash',
  args: ['{promptFile}'],
  promptVia: 'file',
  env: {},
  timeoutSeconds: 30,
  instructionsFile: 'AGENTS.md',
};

export interface WarmUpOptions {
  token: string;
  logger: Logger;
  version: string;
  /**
   * The runner's state directory: the warm-up works in `<stateDir>/warm-up` (on the same disk as
   * the real logs, out of the agent's working directory and of prompt recovery), removed after.
   */
  stateDir: string;
  /** Runs the warm-up prompt; the real executor unless a test says otherwise. */
  runExecutor?: RunExecutor;
  timeoutMs?: number;
}

/** Where the warm-up works: removed before and after, so a crash in the middle leaves nothing for long. */
export const warmUpDirOf = (stateDir: string): string => join(stateDir, 'warm-up');

/**
 * Warms a runner that waits to be claimed (docs/workspace-pools.md#warm-runners): V8 compiles code
 * on its first use, so a runner's first prompt costs several times a later one (a dispatch's first
 * zod parse, the first spawn, the first durable append, the first SSE frame). This runs a few trivial
 * prompts through that same code, over loopback HTTP as the operator sends one, in a runner app of
 * its own: its own queue, event log, state and working directories and a silent logger. Nothing of
 * it reaches the real runner's history, events, working directory, status or logs. Never throws:
 * a warm-up that fails leaves a runner that works as it always did.
 */
export async function warmUpRunner(options: WarmUpOptions): Promise<void> {
  const started = performance.now();
  const dir = warmUpDirOf(options.stateDir);
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    await rm(dir, { recursive: true, force: true });
    await mkdir(join(dir, 'code'), { recursive: true, mode: 0o700 });
    await mkdir(join(dir, 'state'), { recursive: true, mode: 0o700 });
    const status = await runWarmUpPrompt(dir, options, signal);
    const ms = Math.round(performance.now() - started);
    options.logger.info({ ms, status }, 'runner warmed up');
  } catch (err) {
    options.logger.warn({ err }, 'the warm-up failed; the runner serves unwarmed');
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Dispatches the warm-up prompts to a throw-away runner, each followed to its end; answers the last one's status. */
async function runWarmUpPrompt(dir: string, options: WarmUpOptions, signal: AbortSignal): Promise<string> {
  const runner = createRunnerApp({
    token: options.token,
    // Silent: the warm-up's requests and its prompt must not show in the runner's log.
    logger: options.logger.child({ warmUp: true }, { level: 'silent' }),
    state: new RunnerState(),
    version: options.version,
    workdir: join(dir, 'code'),
    shownWorkdir: '/code',
    stateDir: join(dir, 'state'),
    ...(options.runExecutor === undefined ? {} : { runExecutor: options.runExecutor }),
  });
  // The queue only: start() would also write bench event marks, which belong to real prompts.
  await runner.queue.start();
  const server = await listenRunner(runner.app, { host: '127.0.0.1', port: 0, closeGraceMs: 100 });
  try {
    const body: DispatchPromptRequest = {
      text: 'echo warm',
      executor: WARM_UP_INVOCATION,
      agentInstructions: 'Warming up.',
    };
    const at = (path: string): URL => new URL(path, server.url);
    let status = 'none';
    for (let prompt = 0; prompt < WARM_UP_PROMPTS; prompt++) {
      const promptId = randomUUID();
      await send(at(`/v1/tasks/${WARM_UP_TASK_ID}/prompts/${promptId}`), options.token, signal, body);
      status = await followToEnd(
        at(`/v1/tasks/${WARM_UP_TASK_ID}/events?promptId=${promptId}`),
        options,
        signal,
      );
    }
    return status;
  } finally {
    await runner.shutdown();
    await server.stop();
  }
}

/** PUTs the dispatch; resolves when the runner accepted it. */
async function send(
  url: URL,
  token: string,
  signal: AbortSignal,
  body: DispatchPromptRequest,
): Promise<void> {
  const response = await open(url, token, signal, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  response.resume();
  if (response.statusCode !== 201) throw new Error(`the warm-up dispatch answered ${response.statusCode}`);
}

/** Reads the prompt's SSE stream until its terminal status; resolves with that status. */
async function followToEnd(url: URL, options: WarmUpOptions, signal: AbortSignal): Promise<string> {
  const response = await open(url, options.token, signal, {
    method: 'GET',
    headers: { accept: 'text/event-stream' },
  });
  try {
    let buffered = '';
    response.setEncoding('utf8');
    for await (const chunk of response) {
      buffered += String(chunk);
      const frames = buffered.split('\n\n');
      buffered = frames.pop() ?? '';
      const status = frames.map(terminalStatusOf).find((found) => found !== undefined);
      if (status !== undefined) return status;
    }
    throw new Error('the warm-up event stream ended before the prompt did');
  } finally {
    response.destroy();
  }
}

/** The terminal status an SSE frame carries, if it is the prompt's last event. */
function terminalStatusOf(frame: string): string | undefined {
  const data = frame.split('\n').find((line) => line.startsWith('data: '));
  if (data === undefined) return undefined;
  const event = TaskEventSchema.parse(JSON.parse(data.slice('data: '.length)));
  if (event.eventType !== 'status') return undefined;
  const status = RunnerPromptStatusSchema.safeParse(event.payload.status);
  return status.success && isTerminalPromptStatus(status.data) ? status.data : undefined;
}

/** One request to the throw-away runner, with its workload token. */
function open(
  url: URL,
  token: string,
  signal: AbortSignal,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: init.method,
      headers: { ...init.headers, authorization: `Bearer ${token}` },
      signal,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(init.body);
  });
}
