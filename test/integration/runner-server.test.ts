import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentry, spawnAgentry, stopChild, waitForOutput } from '../support/spawn-cli.js';

const TOKEN = randomBytes(24).toString('base64url'); // 32 characters
const LISTENING = /^agentry runner listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

let dir: string;
let runner: ChildProcessWithoutNullStreams;
let url: string;
let stdout = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-runner-'));
  runner = spawnAgentry(['runner'], {
    AGENTRY_RUNNER_TOKEN: TOKEN,
    AGENTRY_RUNNER_PORT: '0',
    AGENTRY_RUNNER_HOST: '127.0.0.1',
    AGENTRY_RUNNER_WORKDIR: join(dir, 'nested', 'code'),
    AGENTRY_RUNNER_STATE_DIR: join(dir, 'state'),
    AGENTRY_LOG_LEVEL: 'debug',
  });
  runner.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const out = await waitForOutput(runner, LISTENING);
  url = LISTENING.exec(out)?.[1] ?? '';
}, 60_000);

afterAll(async () => {
  await stopChild(runner);
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string, authorization?: string) =>
  fetch(`${url}${path}`, { headers: authorization === undefined ? {} : { authorization } });

describe('agentry runner: configuration', () => {
  it('refuses to start without a token, naming the variable', async () => {
    const result = await runAgentry(['runner'], {
      AGENTRY_RUNNER_PORT: '0',
      AGENTRY_RUNNER_HOST: '127.0.0.1',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/AGENTRY_RUNNER_TOKEN: is required/);
  }, 60_000);

  it('refuses a token shorter than 32 characters without echoing it', async () => {
    const short = 'short-token-0123456789';
    const result = await runAgentry(['runner'], { AGENTRY_RUNNER_TOKEN: short, AGENTRY_RUNNER_PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/AGENTRY_RUNNER_TOKEN: must be at least 32 characters/);
    expect(result.stderr).not.toContain(short);
  }, 60_000);

  it('refuses a port that is not a number', async () => {
    const result = await runAgentry(['runner'], { AGENTRY_RUNNER_TOKEN: TOKEN, AGENTRY_RUNNER_PORT: 'http' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/AGENTRY_RUNNER_PORT/);
  }, 60_000);
});

describe('agentry runner: HTTP', () => {
  it('answers /healthz with the token', async () => {
    const res = await get('/healthz', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /healthz without a token with 401 unauthorized', async () => {
    const res = await get('/healthz');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });

  it('answers /healthz with a wrong token with 401', async () => {
    expect((await get('/healthz', `Bearer ${TOKEN.slice(0, -1)}x`)).status).toBe(401);
  });

  it('answers a token sent without the Bearer scheme with 401', async () => {
    expect((await get('/healthz', TOKEN)).status).toBe(401);
  });

  it('answers /v1/status without a token with 401', async () => {
    expect((await get('/v1/status')).status).toBe(401);
  });

  it('reports version, start time, uptime, idle state and the working directory on /v1/status', async () => {
    const res = await get('/v1/status', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      uptimeSeconds: expect.any(Number),
      state: 'idle',
      workdir: join(dir, 'nested', 'code'),
      queueLength: 0,
      runningPromptId: null,
    });
  });

  it('creates the working directory when it is missing', async () => {
    expect((await stat(join(dir, 'nested', 'code'))).isDirectory()).toBe(true);
  });

  it('answers an unknown route (with the token) with 404 not_found', async () => {
    const res = await get('/v1/nothing', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('echoes a request id and logs it as JSON', async () => {
    const res = await get('/v1/status', `Bearer ${TOKEN}`);
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).not.toBe('');
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the log line arrive
    const line = stdout.split('\n').find((l) => l.includes(id));
    expect(JSON.parse(line ?? 'null')).toMatchObject({ req: { id, url: '/v1/status' } });
  });

  it('never writes the token to its logs', async () => {
    await get('/healthz', `Bearer ${TOKEN}`);
    await get('/healthz', `Bearer wrong-${TOKEN}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stdout).toContain('/healthz');
    expect(stdout).not.toContain(TOKEN);
  });
});

describe('agentry runner: shutdown', () => {
  it('stops with exit code 0 on SIGTERM', async () => {
    const child = spawnAgentry(['runner'], {
      AGENTRY_RUNNER_TOKEN: TOKEN,
      AGENTRY_RUNNER_PORT: '0',
      AGENTRY_RUNNER_HOST: '127.0.0.1',
      AGENTRY_RUNNER_WORKDIR: join(dir, 'other'),
      AGENTRY_RUNNER_STATE_DIR: join(dir, 'other-state'),
    });
    await waitForOutput(child, LISTENING);
    expect(await stopChild(child)).toBe(0);
  }, 60_000);
});
