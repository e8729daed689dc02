// runExecutor (runner/executors/run.ts) over real bash processes.
// This file: the events and outcome a run reports, and how the prompt reaches the process.
import { describe, expect, it } from '@jest/globals';
import { cleanUpAfterEach, ofType, run, tempDir, texts } from './executor-run-support.js';

cleanUpAfterEach();

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
});
