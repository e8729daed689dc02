// runExecutor (runner/executors/run.ts) over real bash processes.
// This file: a run with an agent-style output parser: whose init, result and error count.
import { describe, expect, it } from '@jest/globals';
import { invocationOf } from '../../platform/executor-catalog.js';
import type { OutputParser, ParsedOutcome } from '../../runner/executors/formats/index.js';
import { createRunExecutor } from '../../runner/executors/run.js';
import type { ExecutorEvent, ExecutorOutcome } from '../../runner/executors/types.js';
import { cleanUpAfterEach, ofType, shell, tempDir } from './executor-run-support.js';

cleanUpAfterEach();

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
