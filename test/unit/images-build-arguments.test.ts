// images/build.sh and images/cdi/build.sh refuse bad arguments with a clear message before they
// build or cache anything (building itself needs root, buildah and minutes: it is measured by
// hand, see docs/install.md and images/cdi/README.md).
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function runBuild(
  script: string,
  args: string[],
): Promise<{ code: number | null; stderr: string; cacheCreated: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-images-args-'));
  const cache = join(dir, 'cache');
  const child = spawn(resolve(script), args, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tmpdir(),
      AGENTRY_IMAGES_CACHE: cache,
      AGENTRY_TOOLS_CACHE: cache,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const cacheCreated = await exists(cache);
  await rm(dir, { recursive: true, force: true });
  return { code, stderr, cacheCreated };
}

describe('images/build.sh arguments', () => {
  it('refuses an unknown image name in --only and creates no cache', async () => {
    const outcome = await runBuild('images/build.sh', ['--only', 'control-plane,operator']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('unknown image in --only: operator');
    expect(outcome.cacheCreated).toBe(false);
  });

  it('refuses a runner build argument that is not NAME=VALUE and creates no cache', async () => {
    const outcome = await runBuild('images/build.sh', ['--runner-arg', 'INSTALL_CODEX']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('--runner-arg must be NAME=VALUE: INSTALL_CODEX');
    expect(outcome.cacheCreated).toBe(false);
  });
});

describe('images/cdi/build.sh arguments', () => {
  it('refuses an unknown argument and creates no cache', async () => {
    const outcome = await runBuild('images/cdi/build.sh', ['--only', 'importer']);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('unknown argument: --only');
    expect(outcome.cacheCreated).toBe(false);
  });

  it('refuses --out without a file and creates no cache', async () => {
    const outcome = await runBuild('images/cdi/build.sh', ['--out']);
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain('--out needs a file');
    expect(outcome.cacheCreated).toBe(false);
  });
});
