// AGENTRY_API_WORKERS where it cannot apply: the embedded store lives in one process.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentry } from '../support/spawn-cli.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-workers-'));
  dirs.push(dir);
  return dir;
}

describe('AGENTRY_API_WORKERS', () => {
  it('is refused by agentry serve, which is one process', async () => {
    const result = await runAgentry(['serve'], {
      AGENTRY_PORT: '0',
      AGENTRY_DATA_DIR: await dataDir(),
      AGENTRY_API_WORKERS: '2',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AGENTRY_API_WORKERS is for `agentry api` on the Kubernetes store');
    expect(result.stdout).not.toMatch(/serving at/);
  });

  it('above 1 is refused by agentry api on the embedded store', async () => {
    const result = await runAgentry(['api'], {
      AGENTRY_PORT: '0',
      AGENTRY_DATA_DIR: await dataDir(),
      AGENTRY_API_WORKERS: '2',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AGENTRY_API_WORKERS above 1 needs AGENTRY_STORE=kubernetes');
  });

  it('refuses a value that is neither a count nor auto, naming the setting', async () => {
    const result = await runAgentry(['api'], { AGENTRY_API_WORKERS: 'lots' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AGENTRY_API_WORKERS: must be auto or a number of processes');
  });
});
