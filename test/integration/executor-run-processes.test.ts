// runExecutor (runner/executors/run.ts) over real bash processes.
// This file: cancel, process groups, time limits, failures to start, and back-pressure.
import { describe, expect, it } from '@jest/globals';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { invocationOf } from '../../platform/executor-catalog.js';
import { TRUNCATED_MARKER, MAX_LINE_CHARS } from '../../runner/executors/line-reader.js';
import type { ExecutorEvent } from '../../runner/executors/types.js';
import {
  cleanUpAfterEach,
  firstLine,
  ofType,
  pids,
  run,
  runExecutor,
  running,
  shell,
  start,
  tempDir,
  texts,
} from './executor-run-support.js';

cleanUpAfterEach();

describe('runExecutor with the shell executor (real processes)', () => {
  it('cancels a running `sleep 600`: canceled, no error event, promptly', async () => {
    const started = await start('echo started; sleep 600');
    await firstLine(started.events);
    const before = Date.now();
    started.controller.abort();
    expect(await started.outcome).toEqual({ status: 'canceled' });
    expect(Date.now() - before).toBeLessThan(5000);
    expect(ofType(started.events, 'error')).toEqual([]);
  });

  it('kills the whole process group on cancel: a `sleep 600 &` child is gone when the run resolves', async () => {
    const started = await start('sleep 600 & echo $!; wait');
    const child = Number(await firstLine(started.events));
    pids.add(child);
    expect(running(child)).toBe(true);
    started.controller.abort();
    expect(await started.outcome).toEqual({ status: 'canceled' });
    expect(running(child)).toBe(false);
  });

  it('sends SIGKILL after the grace period to a process that ignores SIGTERM', async () => {
    const started = await start("trap '' TERM; echo ready; sleep 600 & wait");
    await firstLine(started.events);
    const before = Date.now();
    started.controller.abort();
    expect(await started.outcome).toEqual({ status: 'canceled' });
    expect(Date.now() - before).toBeGreaterThanOrEqual(250); // killGraceMs is 300
  });

  it('ends processes left in the background when the script itself exits', async () => {
    const { events, outcome } = await run('sleep 600 & echo $!');
    const child = Number(texts(events, 'stdout')[0]);
    pids.add(child);
    expect(outcome.status).toBe('succeeded');
    expect(running(child)).toBe(false);
  });

  it('fails a prompt that exceeds timeoutSeconds with the time-limit message', async () => {
    const before = Date.now();
    const { events, outcome } = await run('sleep 30', { invocation: { timeoutSeconds: 1 } });
    const error = 'the prompt exceeded its time limit of 1s';
    expect(outcome).toEqual({ status: 'failed', error });
    expect(ofType(events, 'error')).toEqual([{ eventType: 'error', payload: { message: error } }]);
    expect(Date.now() - before).toBeLessThan(10_000);
  });

  it('fails with a "not installed" error when the command does not exist', async () => {
    const { events, outcome } = await run('anything', {
      invocation: { name: 'claude', command: 'agentry-no-such-command' },
    });
    const error =
      'executor "claude" is not installed in this workspace (command "agentry-no-such-command" not found on PATH)';
    expect(outcome).toEqual({ status: 'failed', error });
    expect(events.map((e) => e.eventType)).toEqual(['init', 'error']);
  });

  it('fails with a "not executable" error when the command cannot be executed', async () => {
    const dir = await tempDir();
    const command = join(dir, 'not-executable');
    await writeFile(command, '#!/bin/sh\necho hi\n');
    await chmod(command, 0o644);
    const { outcome } = await run('anything', { invocation: { command } });
    expect(outcome).toEqual({
      status: 'failed',
      error: `executor "shell" cannot start: command "${command}" is not executable (permission denied)`,
    });
  });

  it('fails with a clear error, not a hang, when the prompt is too long to be one argument', async () => {
    // 100,000 two-byte characters are 200 KB: over the kernel's 128 KiB limit for one argument.
    const { outcome } = await run(`echo ${'é'.repeat(99_990)}`, {
      invocation: { promptVia: 'argument', args: ['-c', '{prompt}'] },
    });
    expect(outcome).toEqual({
      status: 'failed',
      error:
        'executor "shell" cannot start: its arguments are too long (pass the prompt via stdin or a file)',
    });
  });

  it('returns canceled without starting anything when the signal was already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const events: ExecutorEvent[] = [];
    const outcome = await runExecutor({
      invocation: invocationOf(shell, { timeoutSeconds: 60 }),
      prompt: 'echo never',
      cwd: await tempDir(),
      scratchDir: await tempDir(),
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event);
        return Promise.resolve();
      },
    });
    expect(outcome).toEqual({ status: 'canceled' });
    expect(events).toEqual([]);
  });

  it('hands a slow event log each output chunk’s events together, in order, and reads on only once they are recorded', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { events } = await run('seq 1 20000; seq 1 50 >&2', {
      onEvent: async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
      },
    });
    // Batched, yet bounded by one pipe chunk (64 KiB: at most ~13,000 of these lines, not all 20,050).
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThan(15_000);
    expect(texts(events, 'stdout')).toEqual(Array.from({ length: 20_000 }, (_, i) => String(i + 1)));
    expect(texts(events, 'stderr')).toHaveLength(50);
  });

  it('cuts a line longer than 1 MiB and keeps reading the next ones', async () => {
    const { events } = await run("head -c 3000000 /dev/zero | tr '\\0' a; echo; echo after");
    const lines = texts(events, 'stdout');
    expect(lines).toEqual(['a'.repeat(MAX_LINE_CHARS) + TRUNCATED_MARKER, 'after']);
  });

  it('rejects, and leaves no process behind, when recording an event fails', async () => {
    let textsSeen = 0;
    const started = await start('echo $$; sleep 600 & echo $!; echo more; wait', {
      onEvent: (event) => {
        if (event.eventType === 'text') textsSeen += 1;
        // The leader's and the child's pids are recorded; the event after them fails.
        return textsSeen > 2 ? Promise.reject(new Error('disk full')) : Promise.resolve();
      },
    });
    await expect(started.outcome).rejects.toThrow('recording an executor event');
    const [leader, child] = texts(started.events, 'stdout').map(Number);
    expect(running(leader!)).toBe(false);
    expect(running(child!)).toBe(false);
  });
});
