import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../platform/log.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { TaskEventLog } from '../../runner/event-log.js';

const logger = createLogger({ level: 'silent' });
let stateDir: string;
let logs: TaskEventLog[];

const openLog = (maxIdleTasks?: number, syncFile?: (file: FileHandle) => Promise<void>): TaskEventLog => {
  const log = new TaskEventLog({ stateDir, logger, maxIdleTasks, syncFile });
  logs.push(log);
  return log;
};
const fileOf = (taskId: string): string => join(stateDir, 'tasks', taskId, 'events.jsonl');
const linesOf = async (taskId: string): Promise<string[]> =>
  (await readFile(fileOf(taskId), 'utf8')).split('\n').filter((line) => line !== '');

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'agentry-event-log-'));
  logs = [];
});

afterEach(async () => {
  for (const log of logs) await log.close().catch(() => undefined);
  await rm(stateDir, { recursive: true, force: true });
});

describe('TaskEventLog: sequence numbers', () => {
  it('numbers a task’s events from 0', async () => {
    const log = openLog();
    const task = randomUUID();
    const prompt = randomUUID();
    const seqs = [];
    for (const text of ['a', 'b', 'c'])
      seqs.push((await log.append(task, prompt, 'text', { content: text })).seq);
    expect(seqs).toEqual([0, 1, 2]);
    expect(await log.lastSeq(task)).toBe(2);
  });

  it('numbers each task on its own', async () => {
    const log = openLog();
    const [first, second] = [randomUUID(), randomUUID()];
    await log.append(first, randomUUID(), 'text', { content: 'a' });
    await log.append(first, randomUUID(), 'text', { content: 'b' });
    expect((await log.append(second, randomUUID(), 'text', { content: 'c' })).seq).toBe(0);
  });

  it('continues after the last seq when the log is opened again, never reusing one', async () => {
    const task = randomUUID();
    const prompt = randomUUID();
    const before = openLog();
    await before.append(task, prompt, 'text', { content: 'a' });
    await before.append(task, prompt, 'text', { content: 'b' });
    await before.close();
    const after = openLog();
    expect((await after.append(task, prompt, 'text', { content: 'c' })).seq).toBe(2);
    expect((await after.read(task)).events.map((e) => e.seq)).toEqual([0, 1, 2]);
  });

  it('gives concurrent appends distinct consecutive seqs, written in seq order', async () => {
    const log = openLog();
    const task = randomUUID();
    const appended = await Promise.all(
      Array.from({ length: 100 }, (_, i) => log.append(task, randomUUID(), 'text', { content: String(i) })),
    );
    expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    const onDisk = (await linesOf(task)).map((line) => (JSON.parse(line) as TaskEvent).seq);
    expect(onDisk).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});

describe('TaskEventLog: the file', () => {
  it('writes one JSON TaskEvent a line with timestamp and prompt id', async () => {
    const log = openLog();
    const task = randomUUID();
    const prompt = randomUUID();
    await log.append(task, prompt, 'tool_use', { id: 't1', name: 'bash', input: { command: 'ls' } });
    const [line] = await linesOf(task);
    expect(JSON.parse(line ?? '')).toEqual({
      seq: 0,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      promptId: prompt,
      eventType: 'tool_use',
      payload: { id: 't1', name: 'bash', input: { command: 'ls' } },
    });
  });

  it('has the event on disk before a follower sees it', async () => {
    const log = openLog();
    const task = randomUUID();
    const seenOnDisk: boolean[] = [];
    await log.follow(
      task,
      {},
      {
        onEvent: (event) => {
          const text = readFileSync(fileOf(task), 'utf8');
          seenOnDisk.push(text.includes(`"seq":${event.seq},`));
        },
        onEnd: () => undefined,
      },
    );
    for (let i = 0; i < 5; i++) await log.append(task, randomUUID(), 'text', { content: String(i) });
    expect(seenOnDisk).toEqual([true, true, true, true, true]);
  });

  it('cuts a torn last line (a crash mid-write) and appends on a clean line', async () => {
    const task = randomUUID();
    const prompt = randomUUID();
    const before = openLog();
    await before.append(task, prompt, 'text', { content: 'a' });
    await before.append(task, prompt, 'text', { content: 'b' });
    await before.close();
    await appendFile(fileOf(task), '{"seq":2,"timestamp":"2024-01-0');
    const after = openLog();
    expect((await after.read(task)).events.map((e) => e.seq)).toEqual([0, 1]);
    expect((await after.append(task, prompt, 'text', { content: 'c' })).seq).toBe(2);
    const lines = await linesOf(task);
    expect(lines.map((line) => (JSON.parse(line) as TaskEvent).payload.content)).toEqual(['a', 'b', 'c']);
  });

  it('cuts a complete but unreadable last line (zeros after a crash)', async () => {
    const task = randomUUID();
    const before = openLog();
    await before.append(task, randomUUID(), 'text', { content: 'a' });
    await before.close();
    await appendFile(fileOf(task), '\0\0\0\0\n');
    const after = openLog();
    expect((await after.append(task, randomUUID(), 'text', { content: 'b' })).seq).toBe(1);
    expect(await linesOf(task)).toHaveLength(2);
  });

  it('creates nothing on disk for a task that is only read', async () => {
    const log = openLog();
    const task = randomUUID();
    expect(await log.read(task)).toEqual({ events: [], lastSeq: -1 });
    await expect(stat(join(stateDir, 'tasks', task))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a task id that is not a UUID (it becomes a directory name)', async () => {
    await expect(openLog().append('../escape', randomUUID(), 'text', { content: 'x' })).rejects.toThrow(
      /invalid task id/,
    );
  });
});

describe('TaskEventLog: reading', () => {
  it('reads the events after a seq', async () => {
    const log = openLog();
    const task = randomUUID();
    for (let i = 0; i < 5; i++) await log.append(task, randomUUID(), 'text', { content: String(i) });
    const page = await log.read(task, { after: 2 });
    expect(page.events.map((e) => e.seq)).toEqual([3, 4]);
    expect(page.lastSeq).toBe(4);
  });

  it('reads one prompt’s events when asked', async () => {
    const log = openLog();
    const task = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    for (const prompt of [a, b, a, b, a]) await log.append(task, prompt, 'text', { content: prompt });
    expect((await log.read(task, { promptId: a })).events.map((e) => e.seq)).toEqual([0, 2, 4]);
    expect((await log.read(task, { promptId: b, after: 1 })).events.map((e) => e.seq)).toEqual([3]);
  });

  it('reads a task back from disk after it was evicted from memory', async () => {
    const log = openLog(1);
    const tasks = [randomUUID(), randomUUID(), randomUUID()];
    for (const task of tasks) {
      await log.append(task, randomUUID(), 'text', { content: task });
      await log.append(task, randomUUID(), 'text', { content: task });
    }
    for (const task of tasks) {
      const page = await log.read(task);
      expect(page.events.map((e) => [e.seq, e.payload.content])).toEqual([
        [0, task],
        [1, task],
      ]);
    }
    expect((await log.append(tasks[0] ?? '', randomUUID(), 'text', { content: 'x' })).seq).toBe(2);
  });
});

describe('TaskEventLog: group commit', () => {
  it('makes appends made while a write is in flight durable together, with one sync per batch', async () => {
    let syncs = 0;
    const log = openLog(undefined, async (file) => {
      syncs += 1;
      await file.datasync();
    });
    const task = randomUUID();
    await log.append(task, randomUUID(), 'text', { content: 'first' });
    const appended = await Promise.all(
      Array.from({ length: 100 }, (_, i) => log.append(task, randomUUID(), 'text', { content: String(i) })),
    );
    expect(appended.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(syncs).toBeLessThanOrEqual(3);
    expect(await linesOf(task)).toHaveLength(101);
  });

  it('serves no event of a batch whose sync failed, and refuses the appends queued behind it', async () => {
    let failNext = false;
    const log = openLog(undefined, async (file) => {
      // The first batch fails; the appends made meanwhile wait behind it.
      if (failNext) throw new Error('disk full');
      await file.datasync();
    });
    const task = randomUUID();
    await log.append(task, randomUUID(), 'text', { content: 'durable' });
    const seen: number[] = [];
    let ended = false;
    await log.follow(task, {}, { onEvent: (e) => seen.push(e.seq), onEnd: () => (ended = true) });
    failNext = true;
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => log.append(task, randomUUID(), 'text', { content: String(i) })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 5 }, () => 'rejected'));
    expect(seen).toEqual([0]);
    expect(ended).toBe(true);
  });
});

describe('TaskEventLog: following', () => {
  it('replays then delivers live events without a gap or a duplicate while appends run concurrently', async () => {
    const log = openLog();
    const task = randomUUID();
    const prompt = randomUUID();
    const total = 200;
    const followers: { after: number; seen: number[] }[] = [];
    const appends: Promise<TaskEvent>[] = [];
    for (let i = 0; i < total; i++) {
      appends.push(log.append(task, prompt, 'text', { content: String(i) }));
      if (i % 37 === 0) {
        // Follow from a position that may or may not be durable yet, while appends are in flight.
        const follower = { after: Math.floor(Math.random() * (i + 1)) - 1, seen: [] as number[] };
        followers.push(follower);
        await log.follow(
          task,
          { after: follower.after },
          {
            onEvent: (event) => follower.seen.push(event.seq),
            onEnd: () => undefined,
          },
        );
      }
    }
    await Promise.all(appends);
    expect(followers.length).toBeGreaterThan(3);
    for (const { after, seen } of followers) {
      expect(seen).toEqual(Array.from({ length: total - after - 1 }, (_, i) => after + 1 + i));
    }
  });

  it('follows only one prompt’s events when filtered', async () => {
    const log = openLog();
    const task = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    await log.append(task, a, 'text', { content: 'a0' });
    await log.append(task, b, 'text', { content: 'b0' });
    const seen: string[] = [];
    await log.follow(
      task,
      { promptId: b },
      {
        onEvent: (event) => seen.push(String(event.payload.content)),
        onEnd: () => undefined,
      },
    );
    await log.append(task, a, 'text', { content: 'a1' });
    await log.append(task, b, 'text', { content: 'b1' });
    expect(seen).toEqual(['b0', 'b1']);
  });

  it('waits on a task that has no events yet and delivers its first one', async () => {
    const log = openLog();
    const task = randomUUID();
    const seen: number[] = [];
    await log.follow(task, {}, { onEvent: (event) => seen.push(event.seq), onEnd: () => undefined });
    expect(seen).toEqual([]);
    await log.append(task, randomUUID(), 'status', { status: 'running' });
    expect(seen).toEqual([0]);
  });

  it('stops delivering once unfollowed', async () => {
    const log = openLog();
    const task = randomUUID();
    const seen: number[] = [];
    const unfollow = await log.follow(task, {}, { onEvent: (e) => seen.push(e.seq), onEnd: () => undefined });
    await log.append(task, randomUUID(), 'text', { content: 'a' });
    unfollow();
    await log.append(task, randomUUID(), 'text', { content: 'b' });
    expect(seen).toEqual([0]);
  });

  it('ends its followers when closed', async () => {
    const log = openLog();
    let ended = false;
    await log.follow(randomUUID(), {}, { onEvent: () => undefined, onEnd: () => (ended = true) });
    await log.close();
    expect(ended).toBe(true);
  });
});
