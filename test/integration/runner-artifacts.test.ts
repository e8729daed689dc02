// The runner's artifact routes over real HTTP on loopback, with a real working directory: what the
// operator's artifact sync reads and writes (platform/runner-protocol.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createLogger } from '../../platform/log.js';
import { RunnerClient, RunnerRequestError } from '../../platform/runner-client.js';
import { createRunnerApp, listenRunner } from '../../runner/server.js';
import type { RunnerApp, RunningRunner } from '../../runner/server.js';
import { RunnerState } from '../../runner/state.js';

const TOKEN = randomBytes(24).toString('base64url');

let root: string;
let workdir: string;
let artifacts: string;
let outside: string;
let app: RunnerApp;
let http: RunningRunner;
let client: RunnerClient;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'agentry-runner-artifacts-'));
  workdir = join(root, 'code');
  artifacts = join(workdir, 'artifacts');
  outside = join(root, 'outside');
  await mkdir(workdir);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'not for the API');
  app = createRunnerApp({
    token: TOKEN,
    logger: createLogger({ level: 'silent' }),
    state: new RunnerState(),
    version: '0.0.0-test',
    workdir,
    stateDir: join(root, 'state'),
  });
  await app.start();
  http = await listenRunner(app.app, { host: '127.0.0.1', port: 0, closeGraceMs: 500 });
  client = new RunnerClient({ endpoint: http.url, token: TOKEN });
}, 30_000);

afterAll(async () => {
  await http.stop();
  await app.shutdown();
  await rm(root, { recursive: true, force: true });
});

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** A raw request: fetch would normalize `..` out of the path before sending it. */
function rawRequest(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  const url = new URL(http.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('runner artifacts: listing and transfer', () => {
  it('lists nothing while /code/artifacts does not exist', async () => {
    expect(await client.listArtifacts()).toEqual({ files: [], base: {} });
  });

  it('writes a nested artifact, creating its directories, and serves its bytes and MD5', async () => {
    const written = await client.writeArtifact('reports/q3/summary.txt', Readable.from(['hello ', 'world']));
    expect(written).toEqual({ path: 'reports/q3/summary.txt', size: 11, md5: md5('hello world') });
    expect(await readFile(join(artifacts, 'reports/q3/summary.txt'), 'utf8')).toBe('hello world');
    const body = await client.readArtifact('reports/q3/summary.txt');
    let text = '';
    for await (const chunk of body ?? []) text += String(chunk);
    expect(text).toBe('hello world');
    const { files } = await client.listArtifacts();
    expect(files).toContainEqual({ path: 'reports/q3/summary.txt', size: 11, md5: md5('hello world') });
  });

  it('reports a new MD5 when a file changes (the hash cache does not hide edits)', async () => {
    await mkdir(artifacts, { recursive: true });
    await writeFile(join(artifacts, 'notes.md'), 'one');
    expect((await client.listArtifacts()).files).toContainEqual({
      path: 'notes.md',
      size: 3,
      md5: md5('one'),
    });
    await sleep(20);
    await writeFile(join(artifacts, 'notes.md'), 'two');
    expect((await client.listArtifacts()).files).toContainEqual({
      path: 'notes.md',
      size: 3,
      md5: md5('two'),
    });
  });

  it('deletes an artifact, and answers 204 again when it is already gone', async () => {
    await writeFile(join(artifacts, 'gone.txt'), 'x');
    await client.deleteArtifact('gone.txt');
    await client.deleteArtifact('gone.txt');
    expect((await client.listArtifacts()).files.map((file) => file.path)).not.toContain('gone.txt');
  });

  it('keeps the sync base it is given, and refuses a malformed one', async () => {
    const base = { 'notes.md': { md5: md5('two'), etag: md5('two') } };
    await client.writeArtifactBase(base);
    expect((await client.listArtifacts()).base).toEqual(base);
    const res = await rawRequest('PUT', '/v1/artifacts-base', '{"base":{"a":{"md5":"nope"}}}');
    expect(res.status).toBe(400);
    expect((await client.listArtifacts()).base).toEqual(base);
  });

  it('requires the workload token', async () => {
    const res = await fetch(`${http.url}/v1/artifacts`);
    expect(res.status).toBe(401);
  });
});

describe('runner artifacts: the hash cache', () => {
  const cacheFile = (): string => join(root, 'state', 'artifacts', 'hashes.json');

  /** Lists through a runner started afresh on the same directories (an operator restart's view). */
  async function listAfterRestart(): Promise<{ path: string; size: number; md5: string }[]> {
    const restarted = createRunnerApp({
      token: TOKEN,
      logger: createLogger({ level: 'silent' }),
      state: new RunnerState(),
      version: '0.0.0-test',
      workdir,
      stateDir: join(root, 'state'),
    });
    const server = await listenRunner(restarted.app, { host: '127.0.0.1', port: 0, closeGraceMs: 500 });
    try {
      return (await new RunnerClient({ endpoint: server.url, token: TOKEN }).listArtifacts()).files;
    } finally {
      await server.stop();
      await restarted.shutdown();
    }
  }

  it('trusts a remembered hash while the file is unchanged, also after the runner restarts', async () => {
    const file = join(artifacts, 'cached.bin');
    await writeFile(file, 'AAAA');
    expect((await client.listArtifacts()).files).toContainEqual({
      path: 'cached.bin',
      size: 4,
      md5: md5('AAAA'),
    });
    const cache = z
      .record(z.string(), z.object({ md5: z.string() }).loose())
      .parse(JSON.parse(await readFile(cacheFile(), 'utf8')));
    expect(cache['cached.bin']?.md5).toBe(md5('AAAA'));
    // A remembered hash is believed, not recomputed: plant one the file's bytes cannot give.
    const planted = { ...cache, 'cached.bin': { ...cache['cached.bin'], md5: 'f'.repeat(32) } };
    await writeFile(cacheFile(), JSON.stringify(planted));
    expect(await listAfterRestart()).toContainEqual({ path: 'cached.bin', size: 4, md5: 'f'.repeat(32) });
  });

  it('hashes again a file rewritten with the same size and mtime (its ctime changed)', async () => {
    const file = join(artifacts, 'cached.bin');
    const then = new Date('2026-01-01T00:00:00.000Z'); // whole seconds: utimes restores them exactly
    await utimes(file, then, then);
    await client.listArtifacts();
    await writeFile(file, 'BBBB');
    await utimes(file, then, then);
    expect(await listAfterRestart()).toContainEqual({ path: 'cached.bin', size: 4, md5: md5('BBBB') });
    await rm(file);
  });
});

describe('runner artifacts: paths that leave /code/artifacts', () => {
  it.each([
    ['a ".." segment', '/v1/artifacts/..%2Fsecret.txt'],
    ['an encoded ".." segment', '/v1/artifacts/%2e%2e/outside/secret.txt'],
    ['a nested ".." segment', '/v1/artifacts/reports/%2E%2E/%2E%2E/%2E%2E/outside/secret.txt'],
    ['a backslash', '/v1/artifacts/reports%5C..%5Cx'],
    ['a control character', '/v1/artifacts/bad%01name'],
  ])('refuses %s with 400 and writes nothing', async (_what, path) => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await rawRequest(method, path, method === 'PUT' ? 'payload' : undefined);
      expect(res.status).toBe(400);
    }
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('not for the API');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('neither lists nor serves a symbolic link to a file outside', async () => {
    await symlink(join(outside, 'secret.txt'), join(artifacts, 'leak.txt'));
    expect((await client.listArtifacts()).files.map((file) => file.path)).not.toContain('leak.txt');
    expect(await client.readArtifact('leak.txt')).toBeUndefined();
  });

  it('does not follow a linked directory to read, list or write outside', async () => {
    await symlink(outside, join(artifacts, 'escape'));
    const listed = (await client.listArtifacts()).files.map((file) => file.path);
    expect(listed.filter((path) => path.startsWith('escape'))).toEqual([]);
    await expect(client.readArtifact('escape/secret.txt')).rejects.toMatchObject({ status: 409 });
    await expect(client.writeArtifact('escape/secret.txt', Readable.from(['owned']))).rejects.toBeInstanceOf(
      RunnerRequestError,
    );
    await expect(client.deleteArtifact('escape/secret.txt')).rejects.toMatchObject({ status: 409 });
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('not for the API');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });
});

describe('runner artifacts: atomic writes', () => {
  const partials = async (): Promise<string[]> =>
    (await readdir(artifacts)).filter((name) => name.endsWith('.agentry-partial'));

  it('keeps the old file when the body does not match its content-md5', async () => {
    await writeFile(join(artifacts, 'data.csv'), 'a,b\n1,2\n');
    const wrongMd5 = createHash('md5').update('something else').digest('base64');
    await expect(
      client.writeArtifact('data.csv', Readable.from(['x,y\n']), { contentMd5: wrongMd5 }),
    ).rejects.toMatchObject({ status: 400 });
    expect(await readFile(join(artifacts, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    expect(await partials()).toEqual([]);
  });

  it('keeps the old file, and leaves no partial one, when an upload is cut off midway', async () => {
    await writeFile(join(artifacts, 'big.bin'), 'original');
    const url = new URL(http.url);
    await new Promise<void>((resolve) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: '/v1/artifacts/big.bin',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-length': '1000000' },
      });
      req.on('error', () => {
        resolve();
      });
      req.write(Buffer.alloc(64 * 1024, 1));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    const deadline = Date.now() + 10_000;
    while ((await partials()).length > 0 && Date.now() < deadline) await sleep(50);
    expect(await partials()).toEqual([]);
    expect(await readFile(join(artifacts, 'big.bin'), 'utf8')).toBe('original');
  });

  it('replaces a file whole when the upload completes', async () => {
    const written = await client.writeArtifact('big.bin', Readable.from([Buffer.alloc(300_000, 7)]));
    expect(written.size).toBe(300_000);
    expect((await readFile(join(artifacts, 'big.bin'))).equals(Buffer.alloc(300_000, 7))).toBe(true);
  });
});
