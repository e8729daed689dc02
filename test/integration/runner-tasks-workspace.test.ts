// The runner's task API (runner/server.ts) on loopback with the real shell executor.
// This file: a prompt's files and git repository, made ready in the working directory before it runs.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shellInvocation } from '../support/runner-client.js';
import { client, eventsOf, main, run, runShell, startRunner, useMainRunner } from './runner-tasks-support.js';

useMainRunner();

describe('runner tasks: files', () => {
  let files: Server;
  let filesUrl: string;
  const requested: string[] = [];

  beforeAll(async () => {
    files = createServer((req, res) => {
      requested.push(req.url ?? '');
      if ((req.url ?? '').startsWith('/blob/notes.txt?')) res.end('notes from the file server\n');
      else res.writeHead(404).end('no such file');
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const address = files.address();
    filesUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => files.close(resolve));
  });

  it('downloads the prompt’s files into the working directory, creating subdirectories, before it runs', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const file = { filename: `docs/${promptId}/notes.txt`, url: `${filesUrl}/blob/notes.txt?sig=abc` };
    await runShell(taskId, promptId, `cat docs/${promptId}/notes.txt\n`, { files: [file] });
    const done = await client.waitForTerminal(taskId, promptId);
    expect(done).toMatchObject({ status: 'succeeded', finalResult: 'notes from the file server' });
    expect(await readFile(join(main.workdir, 'docs', promptId, 'notes.txt'), 'utf8')).toBe(
      'notes from the file server\n',
    );
  });

  it('fails the prompt when a download answers 404, naming the file but not the signed URL', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const file = { filename: 'missing.txt', url: `${filesUrl}/blob/missing.txt?sig=secret-signature` };
    await runShell(taskId, promptId, 'echo should-not-run\n', { files: [file] });
    const done = await client.waitForTerminal(taskId, promptId);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/missing\.txt.*404/);
    const events = await eventsOf(taskId, promptId);
    expect(JSON.stringify(events)).not.toContain('secret-signature');
    expect(events.map((e) => e.eventType)).toEqual(['status', 'error', 'status']);
  });

  it.each([
    ['a parent segment', '../escape.txt'],
    ['an absolute path', '/tmp/escape.txt'],
    ['a backslash', 'dir\\escape.txt'],
    ['a NUL character', 'escape\u0000.txt'],
    ['a control character', 'escape\n.txt'],
  ])('refuses a file name with %s with 400 at dispatch and writes nothing', async (_what, filename) => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const before = requested.length;
    const res = await client.dispatch(taskId, promptId, {
      text: 'true\n',
      executor: shellInvocation(),
      files: [{ filename, url: `${filesUrl}/blob/notes.txt?sig=abc` }],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: {
        code: 'validation_error',
        details: [{ path: 'files.0.filename', message: expect.any(String) }],
      },
    });
    expect(await client.prompt(taskId, promptId)).toBeUndefined();
    expect(requested.length).toBe(before);
    await expect(stat(join(main.root, 'escape.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

const git = (cwd: string, ...args: string[]) =>
  run('git', ['-c', 'user.name=Agentry Test', '-c', 'user.email=test@agentry.invalid', ...args], { cwd });

/** A bare repository with one commit on `branch`, pushed from a temporary clone. */
async function bareRepository(root: string, branch: string, files: Record<string, string>): Promise<string> {
  const bare = join(root, `repo-${randomUUID()}.git`);
  const source = join(root, `source-${randomUUID()}`);
  await run('git', ['init', '--quiet', '--bare', bare]);
  await run('git', ['init', '--quiet', source]);
  for (const [name, content] of Object.entries(files)) await writeFile(join(source, name), content);
  await git(source, 'add', '.');
  await git(source, 'commit', '--quiet', '-m', 'first commit');
  await git(source, 'push', '--quiet', bare, `HEAD:refs/heads/${branch}`);
  return bare;
}

describe('runner tasks: git', () => {
  it('clones the repository at its branch into a working directory that already holds files', async () => {
    const runner = await startRunner();
    const bare = await bareRepository(runner.root, 'main', { 'README.md': 'hello from git\n' });
    await writeFile(join(runner.workdir, 'attachment.txt'), 'kept\n');
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runner.client.run(
      taskId,
      promptId,
      'cat README.md attachment.txt\ngit rev-parse --abbrev-ref HEAD\n',
      {
        githubUrl: bare,
      },
    );
    const done = await runner.client.waitForTerminal(taskId, promptId);
    expect(done).toMatchObject({ status: 'succeeded', finalResult: 'hello from git\nkept\nmain' });
  });

  it('clones a named branch given as a file:// URL', async () => {
    const runner = await startRunner();
    const bare = await bareRepository(runner.root, 'feature/x', { 'branch.txt': 'on the feature branch\n' });
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runner.client.run(taskId, promptId, 'cat branch.txt\n', {
      githubUrl: `file://${bare}`,
      branch: 'feature/x',
    });
    expect(await runner.client.waitForTerminal(taskId, promptId)).toMatchObject({
      status: 'succeeded',
      finalResult: 'on the feature branch',
    });
  });

  it('clones once: a later prompt naming the same repository keeps the checkout and its changes', async () => {
    const runner = await startRunner();
    const bare = await bareRepository(runner.root, 'main', { 'README.md': 'original\n' });
    const taskId = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    await runner.client.run(taskId, first, 'echo changed > README.md\n', { githubUrl: bare });
    expect((await runner.client.waitForTerminal(taskId, first)).status).toBe('succeeded');
    await runner.client.run(taskId, second, 'cat README.md\n', { githubUrl: bare });
    expect(await runner.client.waitForTerminal(taskId, second)).toMatchObject({
      status: 'succeeded',
      finalResult: 'changed',
    });
  });

  it('fails the prompt when the clone fails, with a readable error that hides the credentials', async () => {
    const runner = await startRunner();
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runner.client.run(taskId, promptId, 'echo should-not-run\n', {
      githubUrl: 'https://someone:s3cr3t-t0ken@127.0.0.1:1/owner/repo.git',
    });
    const done = await runner.client.waitForTerminal(taskId, promptId);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^cannot clone https:\/\/\*\*\*@127\.0\.0\.1:1\/owner\/repo\.git/);
    const events = (await runner.client.events(taskId)).events;
    expect(JSON.stringify(events)).not.toContain('s3cr3t-t0ken');
    await expect(stat(join(runner.workdir, '.git'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('runner tasks: git through the egress proxy', () => {
  let proxy: Server;
  let proxyUrl = '';
  const seen: { url: string; authorization: string | undefined }[] = [];

  beforeAll(async () => {
    // A stand-in proxy: challenges for credentials, then refuses, recording what git asked for.
    proxy = createServer((req, res) => {
      const authorization = req.headers['proxy-authorization'];
      seen.push({ url: req.url ?? '', authorization });
      if (authorization === undefined)
        res.writeHead(407, { 'proxy-authenticate': 'Basic realm="agentry"' }).end();
      else res.writeHead(403).end('refused by the test proxy\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const address = proxy.address();
    proxyUrl = `http://prompt:tok-123@127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) =>
      proxy.close(() => {
        resolve();
      }),
    );
  });

  it("fetches through the prompt's proxy variables, with its token as the proxy credential", async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'echo should-not-run\n', {
      githubUrl: 'http://git.example.test/owner/repo.git',
      executor: shellInvocation({ http_proxy: proxyUrl, HTTPS_PROXY: proxyUrl }),
    });
    const done = await client.waitForTerminal(taskId, promptId);
    expect(done.status).toBe('failed');
    expect(seen[0]?.url).toMatch(/^http:\/\/git\.example\.test\/owner\/repo\.git\/info\/refs/);
    expect(seen.map((request) => request.authorization)).toContain(
      `Basic ${Buffer.from('prompt:tok-123').toString('base64')}`,
    );
  });
});
