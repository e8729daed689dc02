// Kill -9 of the whole embedded server (API + operator) while prompts run: after a restart every
// prompt's outcome is recorded once and no prompt runs twice. Real `agentry serve` processes, real
// runners (which outlive the crash, as VMs outlive an operator), the shell executor.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskRecordSchema } from '../../api/task/present.js';
import type { TaskRecord } from '../../api/task/present.js';
import { killHard, startServeProcess, stopChild } from '../support/spawn-cli.js';

const KEY = 'crash-test-key-0123456789abcdef';
const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(stopChild));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}, 60_000);

async function startServe(dataDir: string): Promise<{ url: string; child: ChildProcessWithoutNullStreams }> {
  const started = await startServeProcess({ AGENTRY_DATA_DIR: dataDir, AGENTRY_API_KEY: KEY });
  children.push(started.child);
  return started;
}

async function crash(child: ChildProcessWithoutNullStreams): Promise<void> {
  await killHard(child);
  children.splice(children.indexOf(child), 1);
}

const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

async function post(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown>;
}

async function task(url: string, id: string): Promise<TaskRecord> {
  const res = await fetch(`${url}/v1/tasks/${id}`, { headers });
  expect(res.status).toBe(200);
  return TaskRecordSchema.parse(await res.json());
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const codeDir = (dataDir: string, workspaceId: string): string =>
  join(dataDir, 'workspaces', 'agentry-org-default', workspaceId, 'code');

describe('kill -9 of agentry serve while prompts run', () => {
  it('records the running prompt once after a restart and never runs it twice', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'agentry-crash-'));
    dirs.push(dataDir);
    const first = await startServe(dataDir);
    const created = await post(first.url, '/v1/tasks', {
      executor: 'shell',
      prompt: 'echo run >> runs.txt\nsleep 4\necho finished',
    });
    const id = String(created.id);
    await until('the prompt to run', async () =>
      (await task(first.url, id)).prompts[0]?.status === 'running' ? true : undefined,
    );
    await crash(first.child);

    const second = await startServe(dataDir);
    const done = await until('the task to finish', async () => {
      const record = await task(second.url, id);
      return record.status === 'running' ? undefined : record;
    });
    expect(done.status).toBe('completed');
    expect(done.finalResult).toBe('finished');
    expect(done.prompts).toHaveLength(1);
    const runs = await readFile(join(codeDir(dataDir, String(created.workspaceId)), 'runs.txt'), 'utf8');
    expect(runs).toBe('run\n');
  }, 180_000);

  it('runs a prompt queued behind the running one exactly once after a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'agentry-crash-'));
    dirs.push(dataDir);
    const first = await startServe(dataDir);
    const created = await post(first.url, '/v1/tasks', { executor: 'shell', prompt: 'sleep 3' });
    const id = String(created.id);
    await post(first.url, `/v1/tasks/${id}/prompts`, { prompt: 'echo second >> second.txt' });
    await until('the first prompt to run', async () =>
      (await task(first.url, id)).prompts[0]?.status === 'running' ? true : undefined,
    );
    await crash(first.child);

    const second = await startServe(dataDir);
    const done = await until('the task to finish', async () => {
      const record = await task(second.url, id);
      return record.status === 'running' ? undefined : record;
    });
    expect(done.prompts.map((p) => p.status)).toEqual(['succeeded', 'succeeded']);
    const runs = await readFile(join(codeDir(dataDir, String(created.workspaceId)), 'second.txt'), 'utf8');
    expect(runs).toBe('second\n');
  }, 180_000);
});
