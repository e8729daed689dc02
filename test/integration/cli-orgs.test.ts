// `agentry orgs` as an administrator runs it: the CLI as a child process on an embedded data
// directory, then the store read back.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OrganizationType } from '../../crds/index.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-cli-orgs-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function agentry(...args: string[]): Promise<Result> {
  const register = pathToFileURL(join(resolve('.'), 'test/support/register-swc.mjs')).href;
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', register, join(resolve('.'), 'cli/main.ts'), 'orgs', ...args],
      { env: { PATH: process.env.PATH, AGENTRY_DATA_DIR: dir, AGENTRY_LOG_LEVEL: 'silent' } },
      (err, stdout, stderr) => {
        done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
      },
    );
  });
}

async function storedOrganization(name: string) {
  const store = await EmbeddedStore.open(join(dir, 'store'));
  try {
    return await store.get(OrganizationType, undefined, name);
  } finally {
    await store.close();
  }
}

it('creates, lists, changes limits and plan, and deletes an organization', async () => {
  const created = await agentry('create', 'globex', '--plan', 'pro', '--agent-computers', '3');
  expect(created).toMatchObject({ code: 0 });
  expect(created.stdout.trim()).toBe('globex\tpro\t3\t10\t3');

  expect((await agentry('set-limits', 'globex', '--webhooks', '7')).code).toBe(0);
  expect((await agentry('set-plan', 'globex', 'free')).code).toBe(0);
  expect((await storedOrganization('globex'))?.spec).toMatchObject({
    plan: 'free',
    limits: { agentComputers: 3, concurrentTasks: 10, webhooks: 7 },
  });
  expect((await agentry('list')).stdout).toContain('globex\tfree\t3\t10\t7');

  expect((await agentry('delete', 'globex', '--yes')).code).toBe(0);
  expect(await storedOrganization('globex')).toBeUndefined();
}, 120_000);

it('refuses to create an organization that exists, and to delete without --yes', async () => {
  expect((await agentry('create', 'initech')).code).toBe(0);
  const again = await agentry('create', 'initech');
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('already exists');
  expect((await agentry('delete', 'initech')).code).toBe(2);
  expect(await storedOrganization('initech')).toBeDefined();
}, 120_000);

it('prints help for each subcommand', async () => {
  for (const action of ['create', 'list', 'get', 'set-limits', 'set-plan', 'delete']) {
    const help = await agentry(action, '--help');
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toContain(`agentry orgs ${action}`);
  }
}, 120_000);
