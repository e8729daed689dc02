// The runner's task API (runner/server.ts) on loopback with the real shell executor.
// This file: running prompts, one at a time, and cancelling them.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PromptState } from '../../platform/runner-protocol.js';
import { processGone, shellInvocation, sleep, waitForFile } from '../support/runner-client.js';
import { client, dispatched, eventsOf, main, runShell, useMainRunner } from './runner-tasks-support.js';

useMainRunner();

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
