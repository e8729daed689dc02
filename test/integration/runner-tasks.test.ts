import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '../../platform/log.js';
import { isTerminalPromptStatus } from '../../platform/runner-protocol.js';
import type { PromptState, TaskEvent } from '../../platform/runner-protocol.js';
import { createRunnerApp, listenRunner } from '../../runner/server.js';
import type { RunnerApp, RunningRunner } from '../../runner/server.js';
import { RunnerState } from '../../runner/state.js';
import {
  processGone,
  readSse,
  RunnerClient,
  shellInvocation,
  sleep,
  waitForFile,
} from '../support/runner-client.js';

const TOKEN = randomBytes(24).toString('base64url');
const run = promisify(execFile);

interface TestRunner {
  root: string;
  workdir: string;
  stateDir: string;
  app: RunnerApp;
  http: RunningRunner;
  client: RunnerClient;
}

const started: TestRunner[] = [];

/** A runner in this process on port 0 with its own working and state directories, the real shell executor. */
async function startRunner(): Promise<TestRunner> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-runner-tasks-'));
  const workdir = join(root, 'code');
  const stateDir = join(root, 'state');
  await mkdir(workdir);
  await mkdir(stateDir);
  const app = createRunnerApp({
    token: TOKEN,
    logger: createLogger({ level: 'silent' }),
    state: new RunnerState(),
    version: '0.0.0-test',
    workdir,
    stateDir,
    keepaliveMs: 200,
  });
  await app.start();
  const http = await listenRunner(app.app, { host: '127.0.0.1', port: 0, closeGraceMs: 500 });
  const runner = { root, workdir, stateDir, app, http, client: new RunnerClient(http.url, TOKEN) };
  started.push(runner);
  return runner;
}

let main: TestRunner;
let client: RunnerClient;
/** Every prompt a test dispatched on the main runner: a failed test must not leave one blocking the queue. */
const dispatched: [string, string][] = [];

const runShell = async (
  taskId: string,
  promptId: string,
  script: string,
  extra = {},
): Promise<PromptState> => {
  dispatched.push([taskId, promptId]);
  return client.run(taskId, promptId, script, extra);
};

const eventsOf = async (taskId: string, promptId: string): Promise<TaskEvent[]> =>
  (await client.events(taskId, `?promptId=${promptId}`)).events;

beforeAll(async () => {
  main = await startRunner();
  client = main.client;
});

afterEach(async () => {
  for (const [taskId, promptId] of dispatched.splice(0)) {
    const state = await client.prompt(taskId, promptId);
    if (state !== undefined && !isTerminalPromptStatus(state.status)) await client.cancel(taskId, promptId);
  }
});

afterAll(async () => {
  for (const runner of started) {
    await runner.app.shutdown();
    await runner.http.stop();
    await rm(runner.root, { recursive: true, force: true });
  }
});

describe('runner tasks: running prompts', () => {
  it('runs a shell prompt: running status, init, its output, result, and the terminal status last', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const accepted = await runShell(taskId, promptId, 'echo hello\necho world\n');
    expect(accepted).toMatchObject({ taskId, promptId, lastSeq: -1 });
    const done = await client.waitForTerminal(taskId, promptId);
    expect(done).toMatchObject({ status: 'succeeded', finalResult: 'hello\nworld' });
    const events = await eventsOf(taskId, promptId);
    expect(events.map((e) => e.eventType)).toEqual(['status', 'init', 'text', 'text', 'result', 'status']);
    expect(events[0]?.payload).toEqual({ status: 'running' });
    expect(events[1]?.payload).toMatchObject({ cwd: main.workdir, executor: 'shell' });
    expect(events.at(-1)?.payload).toEqual({ status: 'succeeded' });
    expect(done.lastSeq).toBe(events.at(-1)?.seq);
    expect(done.startedAt).toEqual(expect.any(String));
    expect(done.completedAt).toEqual(expect.any(String));
  });

  it('runs the prompt in the working directory', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'pwd\n');
    expect((await client.waitForTerminal(taskId, promptId)).finalResult).toBe(main.workdir);
  });

  it('fails a prompt whose command exits non-zero, the failed status last with its error', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'echo oops >&2\nexit 3\n');
    const done = await client.waitForTerminal(taskId, promptId);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/code 3/);
    const last = (await eventsOf(taskId, promptId)).at(-1);
    expect(last).toMatchObject({ eventType: 'status', payload: { status: 'failed', error: done.error } });
  });

  it('runs a prompt dispatched twice with the same id once: 201, then 200 with the same state', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const counter = join(main.root, `counter-${promptId}`);
    const body = { text: `echo ran >> ${counter}\n`, executor: shellInvocation() };
    dispatched.push([taskId, promptId]);
    const first = await client.dispatch(taskId, promptId, body);
    const second = await client.dispatch(taskId, promptId, body);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    const [a, b] = [(await first.json()) as PromptState, (await second.json()) as PromptState];
    expect(b.acceptedAt).toBe(a.acceptedAt);
    await client.waitForTerminal(taskId, promptId);
    // FIFO: a duplicate run would have happened before this marker prompt ends.
    const marker = randomUUID();
    await runShell(taskId, marker, 'true\n');
    await client.waitForTerminal(taskId, marker);
    expect(await readFile(counter, 'utf8')).toBe('ran\n');
    const again = await client.dispatch(taskId, promptId, body);
    expect(again.status).toBe(200);
    expect(((await again.json()) as PromptState).status).toBe('succeeded');
  });

  it('runs two prompts, of any tasks, one after the other: the second waits pending while the first runs', async () => {
    const [firstTask, secondTask] = [randomUUID(), randomUUID()];
    const [first, second] = [randomUUID(), randomUUID()];
    const order = join(main.root, `order-${first}`);
    await runShell(firstTask, first, `echo first-start >> ${order}\nsleep 1\necho first-end >> ${order}\n`);
    await runShell(secondTask, second, `echo second >> ${order}\n`);
    expect((await client.prompt(secondTask, second))?.status).toBe('pending');
    await client.waitForTerminal(secondTask, second);
    expect(await readFile(order, 'utf8')).toBe('first-start\nfirst-end\nsecond\n');
  });

  it('reports the queue length and the running prompt on /v1/status', async () => {
    const taskId = randomUUID();
    const [sleeper, waiting] = [randomUUID(), randomUUID()];
    const pidFile = join(main.root, `status-${sleeper}`);
    await runShell(taskId, sleeper, `echo $$ > ${pidFile}\nsleep 600\n`);
    await runShell(taskId, waiting, 'true\n');
    await waitForFile(pidFile);
    const res = await fetch(`${client.url}/v1/status`, { headers: client.headers() });
    expect(await res.json()).toMatchObject({ state: 'busy', queueLength: 1, runningPromptId: sleeper });
  });
});

describe('runner tasks: cancel', () => {
  it('cancels a running prompt: it answers canceled and no process of it is left', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const pids = join(main.root, `pids-${promptId}`);
    await runShell(taskId, promptId, `sleep 600 &\necho "$$ $!" > ${pids}\nwait\n`);
    const [shellPid, sleepPid] = (await waitForFile(pids)).split(' ').map(Number);
    expect(processGone(shellPid ?? 0)).toBe(false);
    const res = await client.cancel(taskId, promptId);
    expect(res.status).toBe(200);
    expect(((await res.json()) as PromptState).status).toBe('canceled');
    expect(processGone(shellPid ?? 0)).toBe(true);
    expect(processGone(sleepPid ?? 0)).toBe(true);
    expect((await eventsOf(taskId, promptId)).at(-1)).toMatchObject({ payload: { status: 'canceled' } });
  });

  it('cancels a pending prompt without ever running it', async () => {
    const taskId = randomUUID();
    const [blocker, pending] = [randomUUID(), randomUUID()];
    const ran = join(main.root, `ran-${pending}`);
    const pidFile = join(main.root, `blocker-${blocker}`);
    await runShell(taskId, blocker, `echo $$ > ${pidFile}\nsleep 600\n`);
    await runShell(taskId, pending, `touch ${ran}\n`);
    await waitForFile(pidFile);
    const res = await client.cancel(taskId, pending);
    expect(((await res.json()) as PromptState).status).toBe('canceled');
    await client.cancel(taskId, blocker);
    await sleep(300);
    await expect(stat(ran)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await eventsOf(taskId, pending)).map((e) => e.payload)).toEqual([{ status: 'canceled' }]);
  });

  it('answers a cancel of a finished prompt with its state, unchanged', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'echo done\n');
    const done = await client.waitForTerminal(taskId, promptId);
    const res = await client.cancel(taskId, promptId);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(done);
  });

  it('answers 404 not_found for a prompt that was never dispatched', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const cancel = await client.cancel(taskId, promptId);
    expect(cancel.status).toBe(404);
    expect(await cancel.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(await client.prompt(taskId, promptId)).toBeUndefined();
  });
});

describe('runner tasks: events', () => {
  it('resumes an SSE stream with Last-Event-ID at random points, every event exactly once', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'for i in $(seq 1 25); do echo line$i; sleep 0.02; done\n');
    const seen: number[] = [];
    let last: number | undefined;
    let ended = false;
    while (!ended) {
      const take = 1 + Math.floor(Math.random() * 6);
      const read = await readSse(client, taskId, {
        lastEventId: last,
        until: (r) => r.events.length >= take || r.events.some((e) => isTerminalStatus(e)),
      });
      seen.push(...read.events.map((e) => e.seq));
      expect(read.ids).toEqual(read.events.map((e) => String(e.seq)));
      last = read.events.at(-1)?.seq ?? last;
      ended = read.events.some((e) => isTerminalStatus(e));
    }
    const lastSeq = (await client.events(taskId)).lastSeq;
    expect(seen).toEqual(Array.from({ length: lastSeq + 1 }, (_, i) => i));
  });

  it('sends SSE headers at once and a keepalive comment on a task with no events yet', async () => {
    const read = await readSse(client, randomUUID(), { until: (r) => r.comments.includes('keepalive') });
    expect(read.status).toBe(200);
    expect(read.headers.get('content-type')).toBe('text/event-stream');
    expect(read.headers.get('cache-control')).toBe('no-cache');
    expect(read.headers.get('x-accel-buffering')).toBe('no');
    expect(read.events).toEqual([]);
  });

  it('delivers the first event of a task to a stream opened before it existed', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const reading = readSse(client, taskId, { until: (r) => r.events.length > 0 });
    await sleep(200);
    await runShell(taskId, promptId, 'true\n');
    expect((await reading).events[0]).toMatchObject({ seq: 0, promptId, payload: { status: 'running' } });
  });

  it('takes the larger of `after` and Last-Event-ID', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    await runShell(taskId, promptId, 'echo a\necho b\n');
    await client.waitForTerminal(taskId, promptId);
    const byHeader = await readSse(client, taskId, {
      query: '?after=1',
      lastEventId: 3,
      until: (r) => r.events.length > 0,
    });
    expect(byHeader.events[0]?.seq).toBe(4);
    const byQuery = await readSse(client, taskId, {
      query: '?after=3',
      lastEventId: 1,
      until: (r) => r.events.length > 0,
    });
    expect(byQuery.events[0]?.seq).toBe(4);
  });

  it('answers JSON without text/event-stream: events after a seq of one prompt, and the task’s lastSeq', async () => {
    const taskId = randomUUID();
    const [first, second] = [randomUUID(), randomUUID()];
    await runShell(taskId, first, 'echo one\n');
    await client.waitForTerminal(taskId, first);
    await runShell(taskId, second, 'echo two\n');
    await client.waitForTerminal(taskId, second);
    const all = await client.events(taskId);
    const page = await client.events(taskId, `?after=2&promptId=${second}`);
    expect(page.lastSeq).toBe(all.lastSeq);
    expect(page.events).toEqual(all.events.filter((e) => e.seq > 2 && e.promptId === second));
    expect(page.events.length).toBeGreaterThan(0);
  });

  it('answers an unknown task with an empty page', async () => {
    expect(await client.events(randomUUID())).toEqual({ events: [], lastSeq: -1 });
  });

  it('answers 400 for an `after` that is not a number', async () => {
    const res = await fetch(`${client.url}/v1/tasks/${randomUUID()}/events?after=x`, {
      headers: client.headers(),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'validation_error', details: [{ path: 'after' }] },
    });
  });
});

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

describe('runner tasks: the HTTP boundary', () => {
  it('answers 401 to a dispatch without the workload token and runs nothing', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const res = await fetch(`${client.url}/v1/tasks/${taskId}/prompts/${promptId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'true\n', executor: shellInvocation() }),
    });
    expect(res.status).toBe(401);
    expect(await client.prompt(taskId, promptId)).toBeUndefined();
  });

  it('answers 400 validation_error for a task id that is no object name (it becomes a directory)', async () => {
    const res = await client.dispatch('Not_A..Name', randomUUID(), {
      text: 'true\n',
      executor: shellInvocation(),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'validation_error', details: [{ path: 'taskId' }] },
    });
  });

  it('answers 400 validation_error for a body with an unknown field', async () => {
    const res = await client.dispatch(randomUUID(), randomUUID(), {
      text: 'true\n',
      executor: shellInvocation(),
      surprise: true,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_error');
  });

  it('answers 413 payload_too_large for a body over the limit', async () => {
    const res = await client.dispatch(randomUUID(), randomUUID(), {
      text: 'x'.repeat(2 * 1024 * 1024),
      executor: shellInvocation(),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });

  it('keeps the prompt record 0600 and drops the executor’s environment from it once the prompt ended', async () => {
    const [taskId, promptId] = [randomUUID(), randomUUID()];
    const key = `sk-${randomUUID()}`;
    await runShell(taskId, promptId, 'test -n "$API_KEY" && echo has-key\n', {
      executor: shellInvocation({ API_KEY: key }),
    });
    expect((await client.waitForTerminal(taskId, promptId)).finalResult).toBe('has-key');
    const record = join(main.stateDir, 'tasks', taskId, 'prompts', `${promptId}.json`);
    expect((await stat(record)).mode & 0o777).toBe(0o600);
    expect(await readFile(record, 'utf8')).not.toContain(key);
  });
});

const isTerminalStatus = (event: TaskEvent): boolean =>
  event.eventType === 'status' && ['succeeded', 'failed', 'canceled'].includes(String(event.payload.status));
