// A warm-pool member's runner warms its prompt path up before it listens (AGENTRY_RUNNER_WARM_UP,
// runner/warm-up.ts). The warm-up must leave no trace a client or the operator could see, and the
// first real prompt must record exactly what it records on a runner that never warmed up.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PromptState, TaskEvent } from '../../platform/runner-protocol.js';
import { WARM_UP_TASK_ID } from '../../runner/warm-up.js';
import { startRunnerCli } from '../support/runner-cli.js';
import type { CliRunner } from '../support/runner-cli.js';
import { stopChild } from '../support/spawn-cli.js';

const TOKEN = randomBytes(24).toString('base64url');
const WARMED = /"msg":"runner warmed up"/;

interface WarmUpRunner extends CliRunner {
  root: string;
  /** Its log so far (JSON lines on stdout, beside the listening line). */
  log(): string;
}

const children: ChildProcessWithoutNullStreams[] = [];
const roots: string[] = [];

/** `agentry runner` as the runtimes start it, with its working and state directories under `root`. */
async function startCli(root: string, warmUp: boolean): Promise<WarmUpRunner> {
  const runner = await startRunnerCli(root, {
    token: TOKEN,
    children,
    env: {
      AGENTRY_RUNNER_WORKDIR_SHOWN: '/code',
      AGENTRY_RUNNER_WARM_UP: String(warmUp),
      AGENTRY_LOG_LEVEL: 'info',
    },
  });
  return { ...runner, root, log: () => runner.output().stdout };
}

async function newRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'agentry-runner-warm-up-'));
  roots.push(root);
  return root;
}

/** The runner's log lines that say it warmed up. */
const warmUpLines = (runner: WarmUpRunner): unknown[] =>
  runner
    .log()
    .split('\n')
    .filter((line) => WARMED.test(line))
    .map((line): unknown => JSON.parse(line));

/** Every path below `dir`, relative, sorted. */
const tree = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true })).map(String).sort();

/** What a client learns of a prompt, without the clock. */
const shapeOfEvents = (events: TaskEvent[]) =>
  events.map(({ seq, promptId, eventType, payload }) => ({ seq, promptId, eventType, payload }));
const shapeOfState = ({ acceptedAt: _a, startedAt: _s, completedAt: _c, ...rest }: PromptState) => rest;

afterAll(async () => {
  for (const child of children) await stopChild(child);
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe('a runner started with AGENTRY_RUNNER_WARM_UP=true', () => {
  let warm: WarmUpRunner;
  let plain: WarmUpRunner;
  beforeAll(async () => {
    [warm, plain] = await Promise.all([startCli(await newRoot(), true), startCli(await newRoot(), false)]);
  }, 120_000);

  it('warms up, its warm-up prompt succeeding, before it listens; a runner without the setting does not', () => {
    expect(warmUpLines(warm)).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    expect(warmUpLines(plain)).toEqual([]);
  });

  it('leaves nothing of its warm-up: no task, no file, no prompt in its log, idle and an empty queue', async () => {
    // Its requests and its prompt are not logged: only the one line that says it warmed up.
    expect(warm.log()).not.toMatch(/\/v1\/tasks\/|prompt started|prompt ended|warmUp/);
    expect(await tree(join(warm.root, 'state'))).toEqual(await tree(join(plain.root, 'state')));
    expect(await tree(join(warm.root, 'code'))).toEqual([]);
    expect((await warm.client.events(WARM_UP_TASK_ID)).events).toEqual([]);
    const status = (await (
      await fetch(`${warm.client.url}/v1/status`, { headers: warm.client.headers() })
    ).json()) as Record<string, unknown>;
    expect(status).toMatchObject({ state: 'idle', queueLength: 0, runningPromptId: null });
  });

  it('records its first prompt exactly as a runner that never warmed up: events, seq numbers, state', async () => {
    const taskId = `task-${randomBytes(3).toString('hex')}`;
    const promptId = randomUUID();
    const script = 'echo first line\necho second line >&2\nprintf "%s" done > result.txt';
    const runAndRead = async ({ client }: WarmUpRunner) => {
      await client.run(taskId, promptId, script);
      const end = await client.waitForTerminal(taskId, promptId);
      return { end, events: (await client.events(taskId)).events };
    };
    const [warmRun, plainRun] = await Promise.all([runAndRead(warm), runAndRead(plain)]);
    expect(warmRun.end.status).toBe('succeeded');
    expect(shapeOfState(warmRun.end)).toEqual(shapeOfState(plainRun.end));
    expect(shapeOfEvents(warmRun.events)).toEqual(shapeOfEvents(plainRun.events));
    expect(warmRun.events[0]?.seq).toBe(0);
    expect(await tree(join(warm.root, 'code'))).toEqual(['result.txt']);
  });
});

describe('a warm-up runner restarted with prompts on disk', () => {
  it('does not warm up again: its next prompt is waiting for it', async () => {
    const root = await newRoot();
    const first = await startCli(root, true);
    expect(first.log()).toMatch(WARMED);
    const taskId = 'task-history';
    const promptId = randomUUID();
    await first.client.run(taskId, promptId, 'echo before the restart');
    await first.client.waitForTerminal(taskId, promptId);
    await stopChild(first.child);
    const again = await startCli(root, true);
    expect(again.log()).toMatch(/prompt queue started/);
    expect(again.log()).not.toMatch(WARMED);
    expect((await again.client.prompt(taskId, promptId))?.status).toBe('succeeded');
  }, 120_000);
});
