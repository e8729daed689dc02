// file:// datasets are confined to the lake's file roots (AGENTRY_LAKE_FILE_ROOTS), symbolic links
// followed: a lake server in this process, handed configs as the operator would (or as kubectl
// could write them), with a fake "store" beside the root holding what must never be read.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningLake } from '../../lake/server.js';
import type { Dataset } from '../../crds/context-lake/types.js';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { loadOneDataset, startTestLake } from '../support/lake-server.js';

const TOKEN = randomBytes(24).toString('base64url');
const SECRET = 'runner-token-of-another-org';

let dir: string;
let root: string;
let lake: RunningLake;
let client: LakeClient;
let generation = 0;

const startLake = (env: Record<string, string>): Promise<RunningLake> =>
  startTestLake(TOKEN, { AGENTRY_LAKE_CONNECTORS: 'file', ...env });

/** Pushes one dataset and waits until it settled; answers its state. */
async function load(dataset: Dataset, on: LakeClient = client): Promise<LakeStatus['datasets'][string]> {
  generation += 1;
  return loadOneDataset(on, generation, dataset);
}

const csv = (name: string, path: string): Dataset => ({
  name,
  from: `file://${path}`,
  params: { file_format: 'csv' },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-roots-'));
  root = join(dir, 'lake-files', 'org-a');
  const store = join(dir, 'store', 'secrets');
  await mkdir(join(root, 'linked'), { recursive: true });
  await mkdir(store, { recursive: true });
  await mkdir(join(dir, 'lake-files', 'org-ab'), { recursive: true });
  await writeFile(join(root, 'ok.csv'), 'id,name\n1,ada\n');
  await writeFile(join(store, 'runner.csv'), `token\n${SECRET}\n`);
  await writeFile(join(dir, 'lake-files', 'org-ab', 'theirs.csv'), `token\n${SECRET}\n`);
  await symlink(join(store, 'runner.csv'), join(root, 'link-out.csv'));
  await symlink(join(dir, 'store'), join(root, 'store-link'));
  await writeFile(join(root, 'linked', 'a.csv'), 'token\nmine\n');
  await symlink(join(store, 'runner.csv'), join(root, 'linked', 'b.csv'));
  lake = await startLake({ AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'), AGENTRY_LAKE_FILE_ROOTS: root });
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
}, 60_000);

afterAll(async () => {
  await lake.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lake file roots: what may be read', () => {
  it('loads a file below the root', async () => {
    expect(await load(csv('ok', join(root, 'ok.csv')))).toMatchObject({ status: 'ready', rowCount: 1 });
    expect((await client.sql({ query: 'SELECT name FROM ok' })).rows).toEqual([{ name: 'ada' }]);
  });
});

describe('lake file roots: what is refused', () => {
  it.each([
    ['an absolute path elsewhere (/etc/passwd)', () => '/etc/passwd'],
    ['the store’s own files', () => join(dir, 'store', 'secrets', 'runner.csv')],
    [
      'a sibling directory whose name starts like the root',
      () => join(dir, 'lake-files', 'org-ab', 'theirs.csv'),
    ],
    ['a symbolic link below the root pointing out of it', () => join(root, 'link-out.csv')],
    [
      'a file below a linked directory that leads out',
      () => join(root, 'store-link', 'secrets', 'runner.csv'),
    ],
    ['the lake’s own data directory', () => join(dir, 'lake', 'staging')],
  ])('refuses %s, naming the rule and loading nothing', async (_what, path) => {
    const state = await load(csv('leak', path()));
    expect(state.status).toBe('error');
    expect(state.error).toContain('may read only below the file roots');
    expect(state.rowCount).toBeUndefined();
  });

  it('refuses a path with .. that would climb out of the root', async () => {
    const state = await load(csv('climb', `${root}/../../store/secrets/runner.csv`));
    expect(state).toMatchObject({ status: 'error' });
    expect(state.error).toContain('without ..');
  });

  it('refuses a directory dataset holding a link that leads out, and serves none of its files', async () => {
    const state = await load(csv('linked', `${root}/linked/`));
    expect(state.status).toBe('error');
    expect(state.error).toContain('b.csv');
    expect(state.error).toContain('may read only below the file roots');
    const failure = await client.sql({ query: 'SELECT * FROM linked' }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ status: 400, code: 'sql_error' });
  });

  it('never answers another organization’s secret through SQL', async () => {
    await load(csv('leak', join(root, 'link-out.csv')));
    const failure = await client.sql({ query: 'SELECT * FROM leak' }).catch((err: unknown) => err);
    expect(JSON.stringify(failure)).not.toContain(SECRET);
  });

  it('reads no file at all when no root is configured (the default)', async () => {
    const bare = await startLake({ AGENTRY_LAKE_DATA_DIR: join(dir, 'bare-lake') });
    try {
      const state = await load(
        csv('ok', join(root, 'ok.csv')),
        new LakeClient({ endpoint: bare.url, token: TOKEN }),
      );
      expect(state.status).toBe('error');
      expect(state.error).toContain('may read only below the file roots');
    } finally {
      await bare.stop();
    }
  });
});
