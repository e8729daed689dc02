// The process runtime's confinement settings (docs/adr/0005): fail closed without bubblewrap, the
// single-tenant opt-out, and the read-only paths a confined runner may use (a repository to clone).
import { afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentComputerSpecSchema } from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import type { ProcessRuntimeOptions } from '../../operator/runtimes/process.js';
import type { WorkloadObservation } from '../../operator/runtimes/types.js';
import { createLogger } from '../../platform/log.js';
import { RunnerClient } from '../support/runner-client.js';
import { REPOSITORY_RUNNER_COMMAND } from '../support/runner-command.js';

const run = promisify(execFile);
const NAMESPACE = 'org-test';
const runtimes: ProcessRuntime[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopRunners: true })));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-isolation-runtime-'));
  dirs.push(dir);
  return dir;
}

function newRuntime(dataDir: string, extra: Partial<ProcessRuntimeOptions> = {}): ProcessRuntime {
  const runtime = new ProcessRuntime({
    dataDir,
    runnerCommand: REPOSITORY_RUNNER_COMMAND,
    logger: createLogger({ level: 'silent' }),
    env: { AGENTRY_LOG_LEVEL: 'warn' },
    stopGraceMs: 5000,
    ...extra,
  });
  runtimes.push(runtime);
  return runtime;
}

const computer = (name = 'ws'): AgentComputer => ({
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'AgentComputer',
  metadata: { name, namespace: NAMESPACE, generation: 1 },
  spec: AgentComputerSpecSchema.parse({ operatingMode: 'Running', runtime: 'process' }),
});

async function applyUntilReady(runtime: ProcessRuntime, token: string): Promise<WorkloadObservation> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const observation = await runtime.apply(
      computer(),
      { tokenSecretName: 't', token },
      AbortSignal.timeout(5000),
    );
    if (observation.ready) return observation;
    if (Date.now() > deadline) throw new Error(`never ready: ${JSON.stringify(observation)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('ProcessRuntime isolation: fail closed', () => {
  it('starts nothing where bubblewrap cannot run, and says what to install with reason IsolationUnavailable', async () => {
    const dataDir = await temporaryDir();
    const runtime = newRuntime(dataDir, { bubblewrap: join(dataDir, 'no-such-bwrap') });
    const observation = await runtime.apply(
      computer(),
      { tokenSecretName: 't', token: 'x'.repeat(32) },
      AbortSignal.timeout(5000),
    );
    expect(observation).toMatchObject({
      provisioned: false,
      running: false,
      ready: false,
      reason: 'IsolationUnavailable',
      provisionErrorReason: 'IsolationUnavailable',
    });
    expect(observation.provisionError).toMatch(/apt-get install bubblewrap/);
    expect(observation.provisionError).toMatch(/AGENTRY_PROCESS_ISOLATION=none/);
    await expect(stat(join(dataDir, 'workspaces', NAMESPACE, 'ws', 'runner.json'))).rejects.toThrow(/ENOENT/);
  });

  it('with AGENTRY_PROCESS_ISOLATION=none runs the runner unconfined, after a warning saying so', async () => {
    const dataDir = await temporaryDir();
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const runtime = newRuntime(dataDir, {
      isolation: 'none',
      logger,
      bubblewrap: join(dataDir, 'no-such-bwrap'),
    });
    expect(lines.join('')).toMatch(/AGENTRY_PROCESS_ISOLATION=none.*single-tenant/);
    expect((await applyUntilReady(runtime, randomBytes(24).toString('base64url'))).ready).toBe(true);
  }, 60_000);
});

describe('ProcessRuntime isolation: read-only paths', () => {
  it('a confined runner clones a repository from a configured read-only path', async () => {
    const dataDir = await temporaryDir();
    const repos = await temporaryDir();
    const source = join(repos, 'source');
    const bare = join(repos, 'repo.git');
    await mkdir(source);
    await writeFile(join(source, 'README.md'), 'cloned inside the sandbox\n');
    const git = (...args: string[]) =>
      run('git', ['-c', 'user.name=T', '-c', 'user.email=t@agentry.invalid', ...args], { cwd: source });
    await git('init', '--quiet', '--bare', bare);
    await git('init', '--quiet', '-b', 'main');
    await git('add', '.');
    await git('commit', '--quiet', '-m', 'first');
    await git('push', '--quiet', bare, 'HEAD:refs/heads/main');
    const token = randomBytes(24).toString('base64url');
    const runtime = newRuntime(dataDir, { readOnlyPaths: [repos] });
    const { endpoint } = await applyUntilReady(runtime, token);
    const client = new RunnerClient(endpoint ?? '', token);
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await client.run(taskId, promptId, 'cat README.md\n', { githubUrl: bare });
    expect(await client.waitForTerminal(taskId, promptId)).toMatchObject({
      status: 'succeeded',
      finalResult: 'cloned inside the sandbox',
    });
  }, 60_000);
});
