import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentry, spawnAgentry, stopChild, waitForOutput } from '../support/spawn-cli.js';

const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-cli-'));
  dirs.push(dir);
  return dir;
}

async function startServe(
  env: Record<string, string>,
): Promise<{ url: string; key: string | undefined; child: ChildProcessWithoutNullStreams }> {
  const child = spawnAgentry(['serve'], { AGENTRY_PORT: '0', AGENTRY_LOG_LEVEL: 'warn', ...env });
  children.push(child);
  // The serving line comes last, after the key when one was made.
  const out = await waitForOutput(child, /serving at http:\/\/[0-9.:]+\/v1/);
  const url = /serving at (http:\/\/[0-9.:]+)\/v1/.exec(out)?.[1];
  if (url === undefined) throw new Error(`no url in ${out}`);
  return { url, key: /(agk_[A-Za-z0-9_-]+)/.exec(out)?.[1], child };
}

describe('agentry serve (the embedded default)', () => {
  it('creates org default on first start, prints a working key once, and keeps it across restarts', async () => {
    const dir = await dataDir();
    const first = await startServe({ AGENTRY_DATA_DIR: dir });
    expect(first.key).toMatch(/^agk_/);
    const key = first.key ?? '';
    const res = await fetch(`${first.url}/v1/agent-computers`, { headers: { API_KEY: key } });
    expect(res.status).toBe(200);
    expect(await stopChild(first.child)).toBe(0);

    const second = await startServe({ AGENTRY_DATA_DIR: dir });
    expect(second.key).toBeUndefined();
    expect((await fetch(`${second.url}/v1/agent-computers`, { headers: { API_KEY: key } })).status).toBe(200);
  }, 60_000);

  it('uses AGENTRY_API_KEY as the bootstrap key and prints none', async () => {
    const chosen = 'my-script-key-0123456789abcdef';
    const server = await startServe({ AGENTRY_DATA_DIR: await dataDir(), AGENTRY_API_KEY: chosen });
    expect(server.key).toBeUndefined();
    expect(
      (await fetch(`${server.url}/v1/agent-computers`, { headers: { 'x-api-key': chosen } })).status,
    ).toBe(200);
  }, 60_000);

  it('refuses a bad configuration value with a message naming it', async () => {
    const result = await runAgentry(['serve'], { AGENTRY_PORT: 'eighty', AGENTRY_DATA_DIR: await dataDir() });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/AGENTRY_PORT/);
  }, 60_000);
});

describe('agentry keys', () => {
  it('creates, lists and revokes a key in the embedded data directory', async () => {
    const dir = await dataDir();
    const server = await startServe({ AGENTRY_DATA_DIR: dir });
    await stopChild(server.child);

    const created = await runAgentry(
      ['keys', 'create', '--org', 'default', '--user', 'bob', '--scopes', 'tasks:read'],
      { AGENTRY_DATA_DIR: dir },
    );
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^agk_/);

    const listed = await runAgentry(['keys', 'list'], { AGENTRY_DATA_DIR: dir });
    const row = listed.stdout.split('\n').find((line) => line.includes('\tbob\t'));
    expect(row).toContain('tasks:read');
    expect(listed.stdout).not.toContain(key);

    const id = row?.split('\t')[0] ?? '';
    expect((await runAgentry(['keys', 'revoke', id], { AGENTRY_DATA_DIR: dir })).code).toBe(0);
    expect((await runAgentry(['keys', 'list'], { AGENTRY_DATA_DIR: dir })).stdout).not.toContain('\tbob\t');
  }, 90_000);

  it('refuses a key for an organization that does not exist', async () => {
    const result = await runAgentry(['keys', 'create', '--org', 'nope', '--user', 'x'], {
      AGENTRY_DATA_DIR: await dataDir(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no organization "nope"/);
  }, 60_000);

  it('refuses an unknown scope', async () => {
    const dir = await dataDir();
    await stopChild((await startServe({ AGENTRY_DATA_DIR: dir })).child);
    const result = await runAgentry(
      ['keys', 'create', '--org', 'default', '--user', 'x', '--scopes', 'root'],
      { AGENTRY_DATA_DIR: dir },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/scopes/);
  }, 60_000);
});
