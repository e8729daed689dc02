// The runner's task API (runner/server.ts) on loopback with the real shell executor.
// This file: the event stream, SSE and JSON.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readSse, sleep } from '../support/runner-client.js';
import { client, isTerminalStatus, runShell, useMainRunner } from './runner-tasks-support.js';

useMainRunner();

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
