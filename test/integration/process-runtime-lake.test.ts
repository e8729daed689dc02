// The process runtime running the other program: `agentry lake` (the real lake server from this
// repository's sources) for a ContextLake, in its own directory, with its own environment, adopted
// after an operator restart like a runner.
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextLakeSpecSchema } from '../../crds/index.js';
import type { ContextLake } from '../../crds/index.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import type { ProcessRuntimeOptions } from '../../operator/runtimes/process.js';
import { readRunnerRecord, workloadPaths } from '../../operator/runtimes/process/workspace.js';
import { LAKE_PROGRAM } from '../../operator/runtimes/types.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';
import { LakeClient } from '../../platform/lake-client.js';
import { createLogger } from '../../platform/log.js';
import { REPOSITORY_LAKE_COMMAND, REPOSITORY_RUNNER_COMMAND } from '../support/runner-command.js';

const NAMESPACE = 'org-test';
const READY_TIMEOUT_MS = 45_000;

const runtimes: ProcessRuntime[] = [];
const pids = new Set<number>();
const dirs: string[] = [];

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopRunners: true })));
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  pids.clear();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function newRuntime(options: Partial<ProcessRuntimeOptions> & { dir?: string } = {}) {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'agentry-process-lake-')));
  if (options.dir === undefined) dirs.push(dir);
  const runtime = new ProcessRuntime({
    dataDir: dir,
    runnerCommand: REPOSITORY_RUNNER_COMMAND,
    lakeCommand: REPOSITORY_LAKE_COMMAND,
    lakeEnv: { AGENTRY_LAKE_CONNECTORS: 'file' },
    logger: createLogger({ level: 'silent' }),
    stopGraceMs: 5000,
    env: { AGENTRY_LOG_LEVEL: 'warn' },
    ...options,
  });
  runtimes.push(runtime);
  return { dir, runtime };
}

const lake = (operatingMode: 'Running' | 'Hibernated' = 'Running'): ContextLake => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: 'context-lake', namespace: NAMESPACE, generation: 1, uid: 'lake-uid' },
  spec: ContextLakeSpecSchema.parse({ operatingMode, config: { name: 'p' } }),
});

/** 43 characters, like the tokens the installation key derives (the lake requires 32 or more). */
const newToken = (): string => randomBytes(32).toString('base64url');
const context = (token: string) => ({ tokenSecretName: 'context-lake-lake-token', token });

async function applyUntilReady(runtime: ProcessRuntime, token: string): Promise<WorkloadObservation> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: WorkloadObservation | undefined;
  while (Date.now() < deadline) {
    last = await runtime.apply(lake(), context(token), AbortSignal.timeout(5000));
    if (last.ready) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready within ${READY_TIMEOUT_MS} ms; last observation: ${JSON.stringify(last)}`);
}

async function recordedPid(dir: string): Promise<number | undefined> {
  const pid = (await readRunnerRecord(workloadPaths(dir, LAKE_PROGRAM, NAMESPACE, 'context-lake').record))
    ?.pid;
  if (pid !== undefined) pids.add(pid);
  return pid;
}

describe('ProcessRuntime running a context lake', () => {
  it('starts `agentry lake` in <dataDir>/lakes/<namespace>/<name>, ready with the token on its endpoint', async () => {
    const { dir, runtime } = await newRuntime();
    const token = newToken();
    const observation = await applyUntilReady(runtime, token);
    expect(observation).toMatchObject({
      provisioned: true,
      running: true,
      sandboxId: 'process-context-lake-lake',
    });
    expect(observation.reason).toBe('LakeReady');
    const status = await new LakeClient({ endpoint: observation.endpoint ?? '', token }).status();
    expect(status).toMatchObject({ generation: null, loading: false });
    await expect(stat(join(dir, 'lakes', NAMESPACE, 'context-lake', 'data'))).resolves.toBeDefined();
    await expect(stat(join(dir, 'workspaces'))).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('gives the lake server its own variables and lakeEnv, never the runner’s', async () => {
    const { dir, runtime } = await newRuntime();
    await applyUntilReady(runtime, newToken());
    const pid = await recordedPid(dir);
    const environ = (await readFile(`/proc/${String(pid)}/environ`, 'utf8')).split('\0');
    const dataDir = join(dir, 'lakes', NAMESPACE, 'context-lake', 'data');
    expect(environ).toEqual(
      expect.arrayContaining([
        `AGENTRY_LAKE_DATA_DIR=${dataDir}`,
        'AGENTRY_LAKE_CONNECTORS=file',
        'AGENTRY_LAKE_PORT=0',
      ]),
    );
    expect(environ.filter((line) => line.startsWith('AGENTRY_RUNNER_'))).toEqual([]);
  }, 60_000);

  it('a restarted runtime adopts the live lake server instead of starting another', async () => {
    const { dir, runtime } = await newRuntime();
    const token = newToken();
    const first = await applyUntilReady(runtime, token);
    const pid = await recordedPid(dir);
    await runtime.close(); // the operator goes away; the lake server keeps running
    const { runtime: next } = await newRuntime({ dir });
    const adopted = await next.apply(lake(), context(token), AbortSignal.timeout(5000));
    expect(adopted).toMatchObject({ ready: true, endpoint: first.endpoint });
    expect(await recordedPid(dir)).toBe(pid);
  }, 60_000);

  it('hibernation stops the lake server and keeps its directory', async () => {
    const { dir, runtime } = await newRuntime();
    const token = newToken();
    await applyUntilReady(runtime, token);
    const pid = await recordedPid(dir);
    const stopped = await runtime.apply(lake('Hibernated'), context(token), AbortSignal.timeout(15_000));
    expect(stopped).toMatchObject({ provisioned: true, running: false, ready: false, reason: 'Hibernated' });
    if (pid !== undefined) expect(alive(pid)).toBe(false);
    await expect(stat(join(dir, 'lakes', NAMESPACE, 'context-lake', 'data'))).resolves.toBeDefined();
  }, 60_000);

  it('refuses a context lake when no lake command is configured, saying so', async () => {
    const { runtime } = await newRuntime({ lakeCommand: undefined });
    await expect(runtime.apply(lake(), context(newToken()), AbortSignal.timeout(5000))).rejects.toThrow(
      /no lake command/,
    );
  });
});
