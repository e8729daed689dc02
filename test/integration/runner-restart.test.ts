import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PromptState, TaskEvent } from '../../platform/runner-protocol.js';
import { processGone, sleep, waitForFile } from '../support/runner-client.js';
import { startRunnerCli } from '../support/runner-cli.js';
import type { CliRunner } from '../support/runner-cli.js';
import { stopChild } from '../support/spawn-cli.js';

const TOKEN = randomBytes(24).toString('base64url');

const children: ChildProcessWithoutNullStreams[] = [];
/** Process groups of prompts that a SIGKILLed runner left behind: nothing else will end them. */
const orphanGroups: number[] = [];

const startCli = (root: string): Promise<CliRunner> => startRunnerCli(root, { token: TOKEN, children });

const exited = (child: ChildProcessWithoutNullStreams): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', resolve));

const killGroup = (pgid: number): void => {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
};

const linesOf = async (path: string): Promise<TaskEvent[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TaskEvent);

afterAll(async () => {
  for (const child of children) await stopChild(child);
  for (const pgid of orphanGroups) killGroup(pgid);
});

describe('agentry runner: restart after SIGKILL during a prompt', () => {
  let root: string;
  let restarted: CliRunner;
  const taskId = randomUUID();
  const [interrupted, queued] = [randomUUID(), randomUUID()];
  let beforeCrash: TaskEvent[];
  let afterRestart: TaskEvent[];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentry-runner-restart-'));
    const first = await startCli(root);
    const pidFile = join(root, 'pid');
    await first.client.run(taskId, interrupted, `echo before-crash\necho $$ > ${pidFile}\nsleep 600\n`);
    await first.client.run(taskId, queued, 'echo after-restart\n');
    orphanGroups.push(Number(await waitForFile(pidFile)));
    // The line is read from the pipe and made durable on its own time: wait until it has been.
    beforeCrash = await first.client.waitForEvents(taskId, (events) =>
      events.some((e) => e.eventType === 'text'),
    );
    first.child.kill('SIGKILL');
    await exited(first.child);
    restarted = await startCli(root);
    await restarted.client.waitForTerminal(taskId, queued);
    afterRestart = (await restarted.client.events(taskId)).events;
  }, 120_000);

  afterAll(async () => {
    await stopChild(restarted.child);
    await rm(root, { recursive: true, force: true });
  });

  it('records the interrupted prompt failed with the restart error', async () => {
    expect(await restarted.client.prompt(taskId, interrupted)).toMatchObject({
      status: 'failed',
      error: 'the runner restarted while this prompt ran',
    });
  });

  it('keeps the events written before the crash, then appends an error and the failed status', () => {
    expect(beforeCrash.map((e) => e.eventType)).toEqual(['status', 'init', 'text']);
    expect(afterRestart.slice(0, beforeCrash.length)).toEqual(beforeCrash);
    const mine = afterRestart.filter((e) => e.promptId === interrupted).slice(beforeCrash.length);
    expect(mine.map((e) => [e.eventType, e.payload])).toEqual([
      ['error', { message: 'the runner restarted while this prompt ran' }],
      ['status', { status: 'failed', error: 'the runner restarted while this prompt ran' }],
    ]);
  });

  it('continues the seq after the crash without reusing one', () => {
    expect(afterRestart.map((e) => e.seq)).toEqual(Array.from({ length: afterRestart.length }, (_, i) => i));
  });

  it('runs the prompt that was pending behind it after the restart', async () => {
    expect(await restarted.client.prompt(taskId, queued)).toMatchObject({
      status: 'succeeded',
      finalResult: 'after-restart',
    });
    const firstOfQueued = afterRestart.find((e) => e.promptId === queued);
    const failedInterrupted = afterRestart.findLast((e) => e.promptId === interrupted);
    expect(firstOfQueued?.seq).toBeGreaterThan(failedInterrupted?.seq ?? Infinity);
  });

  it('ends the executor the killed runner left running (its sleep 600)', async () => {
    const shellPid = orphanGroups[0] ?? 0;
    const deadline = Date.now() + 20_000;
    while (!processGone(shellPid) && Date.now() < deadline) await sleep(50);
    expect(processGone(shellPid)).toBe(true);
  });
});

describe('agentry runner: SIGTERM during a prompt', () => {
  let root: string;
  const taskId = randomUUID();
  const [running, pending] = [randomUUID(), randomUUID()];
  let exitCode: number | null;
  let pids: number[];

  const recordOf = async (promptId: string): Promise<{ state: PromptState }> =>
    JSON.parse(
      await readFile(join(root, 'state', 'tasks', taskId, 'prompts', `${promptId}.json`), 'utf8'),
    ) as {
      state: PromptState;
    };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agentry-runner-sigterm-'));
    const runner = await startCli(root);
    const pidFile = join(root, 'pids');
    await runner.client.run(taskId, running, `sleep 600 &\necho "$$ $!" > ${pidFile}\nwait\n`);
    await runner.client.run(taskId, pending, 'echo later\n');
    pids = (await waitForFile(pidFile)).split(' ').map(Number);
    orphanGroups.push(pids[0] ?? 0);
    runner.child.kill('SIGTERM');
    exitCode = await exited(runner.child);
  }, 120_000);

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('exits 0', () => {
    expect(exitCode).toBe(0);
  });

  it('leaves no process of the running prompt', () => {
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(processGone(pid)).toBe(true);
  });

  it('records the running prompt failed because the workspace stopped', async () => {
    expect((await recordOf(running)).state).toMatchObject({
      status: 'failed',
      error: 'the workspace stopped while this prompt ran',
    });
  });

  it('has its error and failed status durably in the event log as its last events', async () => {
    const events = (await linesOf(join(root, 'state', 'tasks', taskId, 'events.jsonl'))).filter(
      (e) => e.promptId === running,
    );
    expect(events.slice(-2).map((e) => [e.eventType, e.payload])).toEqual([
      ['error', { message: 'the workspace stopped while this prompt ran' }],
      ['status', { status: 'failed', error: 'the workspace stopped while this prompt ran' }],
    ]);
  });

  it('leaves the pending prompt pending on disk, and runs it after the next start', async () => {
    expect((await recordOf(pending)).state.status).toBe('pending');
    const next = await startCli(root);
    expect(await next.client.waitForTerminal(taskId, pending)).toMatchObject({
      status: 'succeeded',
      finalResult: 'later',
    });
    expect(await next.client.prompt(taskId, running)).toMatchObject({
      error: 'the workspace stopped while this prompt ran',
    });
    await stopChild(next.child);
  }, 90_000);
});
