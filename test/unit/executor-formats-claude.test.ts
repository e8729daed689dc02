import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createParser } from '../../runner/executors/formats/index.js';
import type { OutputParser } from '../../runner/executors/formats/index.js';
import type { ExecutorEvent } from '../../runner/executors/types.js';

// Samples written from Claude Code's public documentation (headless mode, `--output-format
// stream-json`, and the Agent SDK message types: system/init, assistant, user, result).
const TRANSCRIPT = readFileSync(
  new URL('./fixtures/executors/claude-stream-json.jsonl', import.meta.url),
  'utf8',
);
const CONTEXT = { cwd: '/code', executor: 'claude', model: undefined };

function parse(lines: string[]): { parser: OutputParser; events: ExecutorEvent[] } {
  const parser = createParser('claude-stream-json', CONTEXT);
  return { parser, events: lines.flatMap((line) => parser.stdoutLine(line)) };
}
const transcript = (): { parser: OutputParser; events: ExecutorEvent[] } => parse(TRANSCRIPT.split('\n'));
const line = (value: unknown): string => JSON.stringify(value);

describe('Claude Code stream-json parser', () => {
  it('maps a Claude Code stream-json transcript written from its public docs: init, thinking, text, tool calls', () => {
    expect(transcript().events).toEqual([
      {
        eventType: 'init',
        payload: {
          cwd: '/code',
          executor: 'claude',
          model: 'claude-sonnet-4-5-20250929',
          sessionId: '8f1c3a52-5d0e-4b7a-9a3e-2f6d1c0b9e11',
        },
      },
      {
        eventType: 'thinking',
        payload: { content: 'The user wants the test count. I should run the tests.' },
      },
      { eventType: 'text', payload: { content: "I'll run the test suite." } },
      {
        eventType: 'tool_use',
        payload: {
          id: 'toolu_01',
          name: 'Bash',
          input: { command: 'npm test', description: 'Run the tests' },
        },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'toolu_01', output: 'Tests: 42 passed, 42 total', isError: false },
      },
      {
        eventType: 'tool_use',
        payload: { id: 'toolu_02', name: 'Read', input: { file_path: '/code/missing.ts' } },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'toolu_02', output: 'File does not exist.', isError: true },
      },
      { eventType: 'text', payload: { content: 'All 42 tests pass.' } },
    ]);
  });

  it('takes the final result and usage (with cost and turns) from the documented result message', () => {
    expect(transcript().parser.outcome()).toEqual({
      finalResult: 'All 42 tests pass.',
      usage: {
        input_tokens: 92,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1200,
        output_tokens: 68,
        total_cost_usd: 0.0787,
        duration_ms: 10276,
        num_turns: 3,
      },
      error: undefined,
      reportedResult: true,
    });
  });

  it('treats a documented error result (is_error, subtype error_max_turns) as a failure with an error event', () => {
    const { parser, events } = parse([
      line({ type: 'result', subtype: 'error_max_turns', is_error: true, num_turns: 10, session_id: 's' }),
    ]);
    expect(events).toEqual([
      { eventType: 'error', payload: { message: 'Claude Code ended with error_max_turns' } },
    ]);
    expect(parser.outcome()).toMatchObject({
      error: 'Claude Code ended with error_max_turns',
      reportedResult: true,
    });
  });

  it('uses the result text as the error of a result with is_error true (e.g. an API error)', () => {
    const { parser } = parse([
      line({
        type: 'result',
        subtype: 'success',
        is_error: true,
        result: 'Invalid API key · Fix external API key',
      }),
    ]);
    expect(parser.outcome().error).toBe('Invalid API key · Fix external API key');
  });

  it('marks the messages of a sub-agent with the Task tool call they belong to', () => {
    const { events } = parse([
      line({
        type: 'assistant',
        parent_tool_use_id: 'toolu_task',
        message: { role: 'assistant', content: [{ type: 'text', text: 'sub-agent says hi' }] },
      }),
    ]);
    expect(events).toEqual([
      { eventType: 'text', payload: { content: 'sub-agent says hi', parentToolUseId: 'toolu_task' } },
    ]);
  });

  it('turns a line that is not JSON into plain text and ignores unknown message types', () => {
    const { events } = parse(['Claude Code is starting…', line({ type: 'stream_event', event: {} }), '']);
    expect(events).toEqual([
      { eventType: 'text', payload: { content: 'Claude Code is starting…', stream: 'stdout' } },
    ]);
  });

  it('falls back to the last assistant text when the run ends without a result message', () => {
    const lines = TRANSCRIPT.split('\n').filter((l) => !l.includes('"type":"result"'));
    expect(parse(lines).parser.outcome()).toMatchObject({
      finalResult: 'All 42 tests pass.',
      reportedResult: false,
    });
  });
});
