import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import type { ProcessRuntimeOptions } from '../../operator/runtimes/process.js';
import { RunnerRecordSchema } from '../../operator/runtimes/process/workspace.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';
import { createLogger } from '../../platform/log.js';
import { REPOSITORY_RUNNER_COMMAND } from '../support/runner-command.js';

const RUNNER_COMMAND = REPOSITORY_RUNNER_COMMAND;
const NAMESPACE = 'org-test';
const READY_TIMEOUT_MS = 45_000;

const runtimes: ProcessRuntime[] = [];
const pids = new Set<number>();
const dirs: string[] = [];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopRunners: true })));
  // Belt and braces: nothing a test started may outlive it, even when an assertion failed midway.
  for (const pid of pids) {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  pids.clear();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-process-'));
  dirs.push(dir);
  return dir;
}

function newRuntime(dir: string, extra: Partial<ProcessRuntimeOptions> = {}): ProcessRuntime {
  const runtime = new ProcessRuntime({
    dataDir: dir,
    runnerCommand: RUNNER_COMMAND,
    logger: createLogger({ level: 'silent' }),
    restartBackoff: { initialMs: 100, maxMs: 1000 },
    stopGraceMs: 5000,
    env: { AGENTRY_LOG_LEVEL: 'warn' },
    ...extra,
  });
  runtimes.push(runtime);
  return runtime;
}

function computer(
  name: string,
  operatingMode: 'Running' | 'Hibernated' = 'Running',
  restartedAt?: string,
): AgentComputer {
  return {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'AgentComputer',
    metadata: { name, namespace: NAMESPACE, generation: 1 },
    spec: AgentComputerSpecSchema.parse({ operatingMode, runtime: 'process', restartedAt }),
  };
}

const newToken = (): string => randomBytes(24).toString('base64url');
const context = (token: string) => ({ tokenSecretName: 'runner-token', token });
const codeDir = (dir: string, name: string) => join(dir, 'workspaces', NAMESPACE, name, 'code');

/** The pid runner.json records; tracked for cleanup. */
async function recordedPid(dir: string, name: string): Promise<number> {
  const text = await readFile(join(dir, 'workspaces', NAMESPACE, name, 'runner.json'), 'utf8');
  const { pid } = RunnerRecordSchema.parse(JSON.parse(text));
  pids.add(pid);
  return pid;
}

/** Applies until the observation satisfies `done`, as the operator's requeues would. */
async function applyUntil(
  runtime: ProcessRuntime,
  ac: AgentComputer,
  token: string,
  done: (observation: WorkloadObservation) => boolean,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<WorkloadObservation> {
  const deadline = Date.now() + timeoutMs;
  let last: WorkloadObservation | undefined;
  while (Date.now() < deadline) {
    last = await runtime.apply(ac, context(token), AbortSignal.timeout(5000));
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not reached within ${timeoutMs} ms; last observation: ${JSON.stringify(last)}`);
}

const isReady = (o: WorkloadObservation) => o.ready;

async function readyWorkspace(name = 'ws') {
  const dir = await dataDir();
  const runtime = newRuntime(dir);
  const token = newToken();
  const ac = computer(name);
  const observation = await applyUntil(runtime, ac, token, isReady);
  const pid = await recordedPid(dir, name);
  return { dir, runtime, token, ac, observation, pid };
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('ProcessRuntime: running', () => {
  it('starts a runner that becomes ready, answering /healthz with the token on its endpoint', async () => {
    const { observation, token } = await readyWorkspace();
    expect(observation).toMatchObject({
      provisioned: true,
      running: true,
      ready: true,
      sandboxId: 'process-ws',
      reason: 'RunnerReady',
    });
    const endpoint = observation.endpoint ?? '';
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${endpoint}/healthz`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  }, 60_000);

  it('runs the runner in <dataDir>/workspaces/<namespace>/<name>/code', async () => {
    const { dir, observation, token } = await readyWorkspace();
    const res = await fetch(`${observation.endpoint ?? ''}/v1/status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await res.json()) as { workdir: string }).workdir).toBe(codeDir(dir, 'ws'));
  }, 60_000);

  it('is idempotent: applying again keeps the same process', async () => {
    const { dir, runtime, ac, token, pid } = await readyWorkspace();
    const again = await runtime.apply(ac, context(token), AbortSignal.timeout(5000));
    expect(again.ready).toBe(true);
    expect(await recordedPid(dir, 'ws')).toBe(pid);
  }, 60_000);

  it('reports a starting runner as running but not ready', async () => {
    const dir = await dataDir();
    const first = await newRuntime(dir).apply(computer('ws'), context(newToken()), AbortSignal.timeout(5000));
    await recordedPid(dir, 'ws');
    expect(first).toMatchObject({ provisioned: true, running: true, ready: false, reason: 'Starting' });
  }, 60_000);
});

describe('ProcessRuntime: crashes', () => {
  it('restarts a runner killed with SIGKILL: new pid, ready again', async () => {
    const { dir, runtime, ac, token, pid } = await readyWorkspace();
    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => (await recordedPid(dir, 'ws')) !== pid);
    const observation = await applyUntil(runtime, ac, token, isReady);
    expect(observation.ready).toBe(true);
    expect(await recordedPid(dir, 'ws')).not.toBe(pid);
  }, 60_000);

  it('calls onChange when the runner dies and again when its replacement is healthy', async () => {
    const dir = await dataDir();
    const changes: string[] = [];
    const runtime = newRuntime(dir, { onChange: (namespace, name) => changes.push(`${namespace}/${name}`) });
    const token = newToken();
    await applyUntil(runtime, computer('ws'), token, isReady);
    await waitUntil(() => changes.length >= 1); // became healthy
    changes.length = 0;
    process.kill(await recordedPid(dir, 'ws'), 'SIGKILL');
    await waitUntil(() => changes.length >= 2, 30_000); // died, then the restarted one became healthy
    expect(changes.slice(0, 2)).toEqual([`${NAMESPACE}/ws`, `${NAMESPACE}/ws`]);
  }, 60_000);

  it('reports a runner that exits before listening, with its last words, while it waits to restart', async () => {
    const dir = await dataDir();
    const runtime = newRuntime(dir, {
      runnerCommand: { command: process.execPath, args: ['-e', 'console.error("boom"); process.exit(3)'] },
      restartBackoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    const token = newToken();
    const observation = await applyUntil(runtime, computer('ws'), token, (o) => !o.running);
    expect(observation).toMatchObject({ running: false, ready: false, reason: 'RestartBackoff' });
    await waitUntil(async () => {
      const o = await runtime.apply(computer('ws'), context(token), AbortSignal.timeout(5000));
      return /exited with code 3 before listening: boom/.test(o.message);
    });
  }, 60_000);

  it('backs off exponentially between crash restarts, up to the cap', async () => {
    const dir = await dataDir();
    const crashes: number[] = [];
    const runtime = newRuntime(dir, {
      runnerCommand: { command: process.execPath, args: ['-e', 'process.exit(1)'] },
      restartBackoff: { initialMs: 200, maxMs: 800 },
      onChange: () => crashes.push(Date.now()),
    });
    const token = newToken();
    await runtime.apply(computer('ws'), context(token), AbortSignal.timeout(5000));
    await waitUntil(() => crashes.length >= 5, 30_000);
    const gaps = crashes.slice(1, 5).map((at, i) => at - (crashes[i] ?? 0));
    // Timers never fire early, so each gap is at least its delay: 200, 400, 800, then 800 (the cap).
    [200, 400, 800, 800].forEach((delay, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(delay - 20);
    });
    const observation = await runtime.apply(computer('ws'), context(token), AbortSignal.timeout(5000));
    expect(Number(/restarting in (\d+) ms/.exec(observation.message)?.[1])).toBeLessThanOrEqual(800);
  }, 60_000);

  it('reports a runner command that cannot be executed as a provision error', async () => {
    const dir = await dataDir();
    const runtime = newRuntime(dir, { runnerCommand: { command: join(dir, 'no-such-program'), args: [] } });
    const observation = await runtime.apply(computer('ws'), context(newToken()), AbortSignal.timeout(5000));
    expect(observation).toMatchObject({ running: false, ready: false, reason: 'RestartBackoff' });
    expect(observation.provisionError).toMatch(/cannot start the runner command/);
  }, 60_000);
});

describe('ProcessRuntime: hibernation and redeploy', () => {
  it('hibernating stops the process and keeps the directory', async () => {
    const { dir, runtime, token, pid } = await readyWorkspace();
    const observation = await runtime.apply(
      computer('ws', 'Hibernated'),
      context(token),
      AbortSignal.timeout(5000),
    );
    expect(observation).toMatchObject({
      provisioned: true,
      running: false,
      ready: false,
      reason: 'Hibernated',
    });
    expect(alive(pid)).toBe(false);
    expect((await stat(codeDir(dir, 'ws'))).isDirectory()).toBe(true);
  }, 60_000);

  it('resuming after hibernation starts a new process on the same directory', async () => {
    const { dir, runtime, ac, token, pid } = await readyWorkspace();
    await writeFile(join(codeDir(dir, 'ws'), 'notes.txt'), 'kept');
    await runtime.apply(computer('ws', 'Hibernated'), context(token), AbortSignal.timeout(5000));
    await applyUntil(runtime, ac, token, isReady);
    expect(await recordedPid(dir, 'ws')).not.toBe(pid);
    expect(await readFile(join(codeDir(dir, 'ws'), 'notes.txt'), 'utf8')).toBe('kept');
  }, 60_000);

  it('a changed restartedAt redeploys: a new pid', async () => {
    const { dir, runtime, token, pid } = await readyWorkspace();
    const redeployed = computer('ws', 'Running', '2026-01-01T00:00:00.000Z');
    await applyUntil(runtime, redeployed, token, isReady);
    expect(alive(pid)).toBe(false);
    expect(await recordedPid(dir, 'ws')).not.toBe(pid);
  }, 60_000);

  it('remove stops the process and deletes the workspace directory', async () => {
    const { dir, runtime, ac, pid } = await readyWorkspace();
    await runtime.remove(ac);
    expect(alive(pid)).toBe(false);
    await expect(stat(join(dir, 'workspaces', NAMESPACE, 'ws'))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});

describe('ProcessRuntime: operator restarts', () => {
  it('a new runtime adopts the running runner instead of starting a duplicate', async () => {
    const { dir, runtime, ac, token, pid, observation } = await readyWorkspace();
    await runtime.close(); // the operator goes away; its runner keeps running
    const next = newRuntime(dir);
    const adopted = await next.apply(ac, context(token), AbortSignal.timeout(5000));
    expect(adopted).toMatchObject({ ready: true, endpoint: observation.endpoint });
    expect(await recordedPid(dir, 'ws')).toBe(pid);
    expect(alive(pid)).toBe(true);
  }, 60_000);

  it('the adopting runtime restarts an adopted runner that dies', async () => {
    const { dir, runtime, ac, token, pid } = await readyWorkspace();
    await runtime.close();
    const next = newRuntime(dir, { livenessIntervalMs: 100 });
    expect((await next.apply(ac, context(token), AbortSignal.timeout(5000))).ready).toBe(true);
    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => (await recordedPid(dir, 'ws')) !== pid);
    expect((await applyUntil(next, ac, token, isReady)).ready).toBe(true);
  }, 60_000);

  it('replaces a recorded runner that does not answer with the current token', async () => {
    const { dir, runtime, ac, pid } = await readyWorkspace();
    await runtime.close();
    const next = newRuntime(dir);
    await applyUntil(next, ac, newToken(), isReady);
    expect(alive(pid)).toBe(false);
    expect(await recordedPid(dir, 'ws')).not.toBe(pid);
  }, 60_000);

  it('stops a recorded runner when the workspace is hibernated while the operator was away', async () => {
    const { dir, runtime, token, pid } = await readyWorkspace();
    await runtime.close();
    const next = newRuntime(dir);
    await next.apply(computer('ws', 'Hibernated'), context(token), AbortSignal.timeout(5000));
    expect(alive(pid)).toBe(false);
  }, 60_000);

  it('never signals a process that merely reuses a recorded pid', async () => {
    const dir = await dataDir();
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
    const strangerPid = stranger.pid ?? 0;
    pids.add(strangerPid);
    const workspace = join(dir, 'workspaces', NAMESPACE, 'ws');
    await newRuntime(dir).apply(computer('ws', 'Hibernated'), context(newToken()), AbortSignal.timeout(5000));
    await writeFile(
      join(workspace, 'runner.json'),
      JSON.stringify({
        pid: strangerPid,
        port: null,
        startedAt: new Date().toISOString(),
        restartedAt: null,
      }),
    );
    const next = newRuntime(dir);
    await applyUntil(next, computer('ws'), newToken(), isReady);
    expect(alive(strangerPid)).toBe(true);
    expect(await recordedPid(dir, 'ws')).not.toBe(strangerPid);
  }, 60_000);
});
