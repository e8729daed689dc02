import { afterEach, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_EXECUTOR_DEFINITIONS, invocationOf } from '../../platform/executor-catalog.js';
import type { ExecutorDefinition } from '../../platform/executor-catalog.js';
import type { ExecutorInvocation } from '../../platform/runner-protocol.js';
import { TRUNCATED_MARKER, MAX_LINE_CHARS } from '../../runner/executors/line-reader.js';
import type { OutputParser, ParsedOutcome } from '../../runner/executors/formats/index.js';
import { createRunExecutor } from '../../runner/executors/run.js';
import type { ExecutorEvent, ExecutorOutcome } from '../../runner/executors/types.js';

// Real bash processes through the built-in `shell` executor. The agent CLIs are not faked here:
// their parsers are tested on documented samples in test/unit/executor-formats-*.test.ts.
const builtinShell = BUILTIN_EXECUTOR_DEFINITIONS.find((d) => d.name === 'shell');
if (builtinShell === undefined) throw new Error('the built-in shell executor is missing');
const shell: ExecutorDefinition = builtinShell;

const runExecutor = createRunExecutor({ killGraceMs: 300 });
const dirs: string[] = [];
const pids = new Set<number>();

afterEach(async () => {
  // Nothing a test started may outlive it, even when an assertion failed midway.
  for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
  pids.clear();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Whether `pid` runs: a zombie (dead, not yet reaped by PID 1) does not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agentry-executor-')));
  dirs.push(dir);
  return dir;
}

interface Started {
  events: ExecutorEvent[];
  outcome: Promise<ExecutorOutcome>;
  controller: AbortController;
  cwd: string;
}

interface StartOptions {
  invocation?: Partial<ExecutorInvocation>;
  onEvent?: (event: ExecutorEvent) => Promise<void>;
  cwd?: string;
}

async function start(prompt: string, options: StartOptions = {}): Promise<Started> {
  const cwd = options.cwd ?? (await tempDir());
  const scratchDir = await tempDir();
  const events: ExecutorEvent[] = [];
  const controller = new AbortController();
  const invocation = { ...invocationOf(shell, { timeoutSeconds: 60 }), ...options.invocation };
  const outcome = runExecutor({
    invocation,
    prompt,
    cwd,
    scratchDir,
    signal: controller.signal,
    onEvent: async (event) => {
      events.push(event);
      await options.onEvent?.(event);
    },
  });
  return { events, outcome, controller, cwd };
}

async function run(
  prompt: string,
  options: StartOptions = {},
): Promise<{ events: ExecutorEvent[]; outcome: ExecutorOutcome }> {
  const started = await start(prompt, options);
  return { events: started.events, outcome: await started.outcome };
}

const texts = (events: ExecutorEvent[], stream: string): unknown[] =>
  events.filter((e) => e.eventType === 'text' && e.payload.stream === stream).map((e) => e.payload.content);
const ofType = (events: ExecutorEvent[], type: ExecutorEvent['eventType']): ExecutorEvent[] =>
  events.filter((e) => e.eventType === type);

/** Resolves with the first stdout line, once the script printed it. */
async function firstLine(events: ExecutorEvent[]): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const line = texts(events, 'stdout')[0];
    if (typeof line === 'string') return line;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the script printed nothing within 5 s');
}

describe('runExecutor with the shell executor (real processes)', () => {
  // Regression: reading stopped 2 s after the process exited, dropping output still queued in the
  // pipe while the runner made earlier events durable, and the prompt still succeeded.
  it('reads every line a fast writer left queued in the pipe when it exited, however slowly events are recorded', async () => {
    const { events, outcome } = await run('seq 1 4000', {
      onEvent: () => new Promise((resolve) => setTimeout(resolve, 1)),
    });
    const lines = texts(events, 'stdout');
    expect(lines).toHaveLength(4000);
    expect(lines.at(-1)).toBe('4000');
    expect(outcome).toMatchObject({ status: 'succeeded' });
  }, 60_000);

  it('sends init first, with the working directory, the executor name and a null model', async () => {
    const { events } = await run('true');
    expect(events[0]).toEqual({
      eventType: 'init',
      payload: { cwd: expect.any(String), executor: 'shell', model: null },
    });
    expect(ofType(events, 'init')).toHaveLength(1);
  });

  it('turns stdout and stderr lines into text events, each stream in order', async () => {
    const { events } = await run('echo one; echo warn1 >&2; echo two; echo warn2 >&2; echo three');
    expect(texts(events, 'stdout')).toEqual(['one', 'two', 'three']);
    expect(texts(events, 'stderr')).toEqual(['warn1', 'warn2']);
  });

  it('succeeds on exit 0 with the stdout text as final result and one result event, last', async () => {
    const { events, outcome } = await run('echo hello; echo ignored >&2; echo world');
    expect(outcome).toEqual({ status: 'succeeded', finalResult: 'hello\nworld' });
    expect(ofType(events, 'result')).toEqual([{ eventType: 'result', payload: { result: 'hello\nworld' } }]);
    expect(events.at(-1)?.eventType).toBe('result');
  });

  it('keeps a last line that has no newline', async () => {
    const { outcome } = await run("printf 'first\\nno newline'");
    expect(outcome).toEqual({ status: 'succeeded', finalResult: 'first\nno newline' });
  });

  it('fails on exit 3 with an error event naming the code and the last stderr line, and no result', async () => {
    const { events, outcome } = await run('echo working; echo "disk full" >&2; exit 3');
    const error = 'executor exited with code 3: disk full';
    expect(outcome).toEqual({ status: 'failed', error });
    expect(ofType(events, 'error')).toEqual([{ eventType: 'error', payload: { message: error } }]);
    expect(ofType(events, 'result')).toEqual([]);
  });

  it('runs in the given working directory', async () => {
    const cwd = await tempDir();
    const { outcome } = await run('pwd', { cwd });
    expect(outcome).toEqual({ status: 'succeeded', finalResult: cwd });
  });

  it('passes the invocation env and only PATH/HOME/LANG/TZ/TMPDIR/USER of its own', async () => {
    process.env.AGENTRY_TEST_LEAK = 'leaked';
    try {
      const { outcome } = await run('echo "${AGENTRY_TEST_LEAK:-unset} $GREETING ${PATH:+path}"', {
        invocation: { env: { GREETING: 'hi' } },
      });
      expect(outcome).toEqual({ status: 'succeeded', finalResult: 'unset hi path' });
    } finally {
      delete process.env.AGENTRY_TEST_LEAK;
    }
  });

  it('passes a 100,000-character prompt with multi-byte characters through a file, intact', async () => {
    const head = "cat <<'EOF'\n";
    const tail = '\nEOF\n';
    const unit = 'é漢🙂x'; // 2-, 3- and 4-byte UTF-8 characters (🙂 is two UTF-16 units)
    const size = 100_000 - head.length - tail.length;
    const body = unit.repeat(Math.floor(size / unit.length)) + 'x'.repeat(size % unit.length);
    const prompt = head + body + tail;
    expect(prompt).toHaveLength(100_000);
    const { outcome } = await run(prompt);
    expect(outcome.status).toBe('succeeded');
    // Compared as a boolean: a failing diff of 100,000 characters would drown the report.
    expect(outcome.status === 'succeeded' && outcome.finalResult === body).toBe(true);
  });

  it('writes the prompt file readable by its owner only (mode 0600)', async () => {
    const { outcome } = await run('stat -c %a "$0"');
    expect(outcome).toEqual({ status: 'succeeded', finalResult: '600' });
  });

  it('writes the prompt to stdin when promptVia is stdin', async () => {
    const { outcome } = await run('echo "from stdin"', { invocation: { promptVia: 'stdin', args: ['-s'] } });
    expect(outcome).toEqual({ status: 'succeeded', finalResult: 'from stdin' });
  });

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

  it('awaits each event before the next: a slow event log loses nothing and sees them one at a time', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { events } = await run('seq 1 300; seq 1 50 >&2', {
      onEvent: async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
      },
    });
    expect(maxInFlight).toBe(1);
    expect(texts(events, 'stdout')).toEqual(Array.from({ length: 300 }, (_, i) => String(i + 1)));
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

/**
 * A parser standing in for an agent CLI's (whose real parsers are tested on documented samples):
 * `INIT` is the CLI's own init, any other line is text, and the outcome is what the test says.
 */
function scriptedParser(outcome: ParsedOutcome): OutputParser {
  return {
    providesInit: true,
    stdoutLine: (line) =>
      line === 'INIT'
        ? [{ eventType: 'init', payload: { cwd: '/reported', executor: 'agent', model: 'reported-model' } }]
        : [{ eventType: 'text', payload: { content: line } }],
    stderrLine: () => [],
    outcome: () => outcome,
  };
}

async function runParsed(
  script: string,
  outcome: ParsedOutcome,
): Promise<{ events: ExecutorEvent[]; outcome: ExecutorOutcome }> {
  const events: ExecutorEvent[] = [];
  const run = createRunExecutor({ killGraceMs: 300, createParser: () => scriptedParser(outcome) });
  const result = await run({
    invocation: invocationOf(shell, { timeoutSeconds: 60 }),
    prompt: script,
    cwd: await tempDir(),
    scratchDir: await tempDir(),
    signal: new AbortController().signal,
    onEvent: (event) => {
      events.push(event);
      return Promise.resolve();
    },
  });
  return { events, outcome: result };
}

describe('runExecutor with an agent-style parser over a real process', () => {
  it("uses the CLI's own init instead of the runner's, and sends exactly one", async () => {
    const { events } = await runParsed('echo INIT; echo hi', { finalResult: 'hi', reportedResult: true });
    expect(ofType(events, 'init')).toEqual([
      { eventType: 'init', payload: { cwd: '/reported', executor: 'agent', model: 'reported-model' } },
    ]);
    expect(events[0]?.eventType).toBe('init');
  });

  it("sends the runner's init before other output and drops a CLI init that comes later", async () => {
    const { events } = await runParsed('echo hello; echo INIT', { finalResult: '', reportedResult: true });
    expect(events.slice(0, 2).map((e) => e.eventType)).toEqual(['init', 'text']);
    expect(ofType(events, 'init')).toEqual([
      { eventType: 'init', payload: { cwd: expect.any(String), executor: 'shell', model: null } },
    ]);
  });

  it("sends the runner's init when a CLI that announces itself prints nothing", async () => {
    const { events } = await runParsed('exit 0', { finalResult: '', reportedResult: false });
    expect(events.map((e) => e.eventType)).toEqual(['init', 'result']);
  });

  it('passes the final result and usage the CLI reported to the one result event', async () => {
    const { events, outcome } = await runParsed('echo INIT', {
      finalResult: 'done',
      usage: { output_tokens: 5 },
      reportedResult: true,
    });
    expect(outcome).toEqual({ status: 'succeeded', finalResult: 'done' });
    expect(ofType(events, 'result')).toEqual([
      { eventType: 'result', payload: { result: 'done', usage: { output_tokens: 5 } } },
    ]);
  });

  it("fails a run that exits 0 when the CLI reported its own error, keeping the CLI's result", async () => {
    const { events, outcome } = await runParsed('echo INIT; echo working', {
      finalResult: 'partial',
      error: 'Claude Code ended with error_max_turns',
      reportedResult: true,
    });
    expect(outcome).toEqual({
      status: 'failed',
      error: 'Claude Code ended with error_max_turns',
      finalResult: 'partial',
    });
    expect(ofType(events, 'result')).toEqual([{ eventType: 'result', payload: { result: 'partial' } }]);
    // The parser already sent the CLI's error event; the runner does not repeat it.
    expect(ofType(events, 'error')).toEqual([]);
  });

  it('sends no result event for a failed run whose CLI produced none', async () => {
    const { events, outcome } = await runParsed('echo INIT; exit 2', {
      finalResult: 'ignored',
      reportedResult: false,
    });
    expect(outcome).toEqual({ status: 'failed', error: 'executor exited with code 2' });
    expect(ofType(events, 'result')).toEqual([]);
    expect(ofType(events, 'error')).toHaveLength(1);
  });
});
