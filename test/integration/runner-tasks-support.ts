// What the runner task tests share: runners in this process on loopback with the real shell
// executor, one main runner per file, and helpers to dispatch prompts and read their events.
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../platform/log.js';
import { isTerminalPromptStatus } from '../../platform/runner-protocol.js';
import type { PromptState, TaskEvent } from '../../platform/runner-protocol.js';
import { createRunnerApp, listenRunner } from '../../runner/server.js';
import type { RunnerApp, RunnerAppOptions, RunningRunner } from '../../runner/server.js';
import { RunnerState } from '../../runner/state.js';
import { RunnerClient } from '../support/runner-client.js';

export const TOKEN = randomBytes(24).toString('base64url');
export const run = promisify(execFile);

export interface TestRunner {
  root: string;
  workdir: string;
  stateDir: string;
  app: RunnerApp;
  http: RunningRunner;
  client: RunnerClient;
}

const started: TestRunner[] = [];

/** A runner in this process on port 0 with its own working and state directories, the real shell executor. */
export async function startRunner(options: Partial<RunnerAppOptions> = {}): Promise<TestRunner> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-runner-tasks-'));
  const workdir = join(root, 'code');
  const stateDir = join(root, 'state');
  await mkdir(workdir);
  await mkdir(stateDir);
  const app = createRunnerApp({
    token: TOKEN,
    logger: createLogger({ level: 'silent' }),
    state: new RunnerState(),
    version: '0.0.0-test',
    workdir,
    stateDir,
    keepaliveMs: 200,
    ...options,
  });
  await app.start();
  const http = await listenRunner(app.app, { host: '127.0.0.1', port: 0, closeGraceMs: 500 });
  const runner = { root, workdir, stateDir, app, http, client: new RunnerClient(http.url, TOKEN) };
  started.push(runner);
  return runner;
}

/** The runner most tests share and its client: live bindings, set by useMainRunner's beforeAll. */
export let main: TestRunner;
export let client: RunnerClient;
/** Every prompt a test dispatched on the main runner: a failed test must not leave one blocking the queue. */
export const dispatched: [string, string][] = [];

export const runShell = async (
  taskId: string,
  promptId: string,
  script: string,
  extra = {},
): Promise<PromptState> => {
  dispatched.push([taskId, promptId]);
  return client.run(taskId, promptId, script, extra);
};

export const eventsOf = async (taskId: string, promptId: string): Promise<TaskEvent[]> =>
  (await client.events(taskId, `?promptId=${promptId}`)).events;

/** Starts the main runner for the file, cancels what a test left running, and stops every runner at the end. */
export function useMainRunner(): void {
  beforeAll(async () => {
    main = await startRunner();
    client = main.client;
  });

  afterEach(async () => {
    for (const [taskId, promptId] of dispatched.splice(0)) {
      const state = await client.prompt(taskId, promptId);
      if (state !== undefined && !isTerminalPromptStatus(state.status)) await client.cancel(taskId, promptId);
    }
  });

  afterAll(stopStartedRunners);
}

/** Stops every runner startRunner started, and removes their directories. */
export async function stopStartedRunners(): Promise<void> {
  for (const runner of started.splice(0)) {
    await runner.app.shutdown();
    await runner.http.stop();
    await rm(runner.root, { recursive: true, force: true });
  }
}

export const isTerminalStatus = (event: TaskEvent): boolean =>
  event.eventType === 'status' && ['succeeded', 'failed', 'canceled'].includes(String(event.payload.status));
