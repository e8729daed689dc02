import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createParser } from '../../runner/executors/formats/index.js';
import type { OutputParser } from '../../runner/executors/formats/index.js';
import type { ExecutorEvent } from '../../runner/executors/types.js';

// Samples written from Gemini CLI's public documentation (headless mode, `--output-format
// stream-json`: init, message, tool_use, tool_result, error, result) and its event type definitions.
const TRANSCRIPT = readFileSync(
  new URL('./fixtures/executors/gemini-stream-json.jsonl', import.meta.url),
  'utf8',
);

function parse(lines: string[]): { parser: OutputParser; events: ExecutorEvent[] } {
  const parser = createParser('gemini-stream-json', { cwd: '/code', executor: 'gemini', model: undefined });
  return { parser, events: lines.flatMap((l) => parser.stdoutLine(l)) };
}
const line = (value: unknown): string => JSON.stringify(value);

describe('Gemini CLI stream-json parser', () => {
  it('maps a Gemini CLI stream-json transcript written from its public docs: init, deltas, tools, warnings', () => {
    expect(parse(TRANSCRIPT.split('\n')).events).toEqual([
      {
        eventType: 'init',
        payload: { cwd: '/code', executor: 'gemini', model: 'gemini-2.5-pro', sessionId: 'abc123' },
      },
      { eventType: 'text', payload: { content: "I'll list ", delta: true } },
      { eventType: 'text', payload: { content: 'the files.', delta: true } },
      {
        eventType: 'tool_use',
        payload: {
          id: 'run_shell_command-1760097603000',
          name: 'run_shell_command',
          input: { command: 'ls -la' },
        },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'run_shell_command-1760097603000', output: 'README.md\npackage.json', isError: false },
      },
      {
        eventType: 'tool_use',
        payload: {
          id: 'read_file-1760097605000',
          name: 'read_file',
          input: { absolute_path: '/code/missing.md' },
        },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'read_file-1760097605000', output: 'File not found: /code/missing.md', isError: true },
      },
      {
        eventType: 'error',
        payload: { message: 'Loop detected, stopping execution', severity: 'warning', fatal: false },
      },
      { eventType: 'text', payload: { content: 'The directory holds ', delta: true } },
      { eventType: 'text', payload: { content: 'README.md and package.json.', delta: true } },
    ]);
  });

  it('takes the text after the last tool call as final result and the stats as usage', () => {
    expect(parse(TRANSCRIPT.split('\n')).parser.outcome()).toEqual({
      finalResult: 'The directory holds README.md and package.json.',
      usage: {
        total_tokens: 250,
        input_tokens: 200,
        output_tokens: 50,
        cached: 0,
        input: 200,
        duration_ms: 8000,
        tool_calls: 2,
      },
      error: undefined,
      reportedResult: true,
    });
  });

  it('fails on a documented result with status error, with its error message', () => {
    const { parser, events } = parse([
      line({
        type: 'result',
        status: 'error',
        error: { type: 'FatalTurnLimitedError', message: 'turn limit reached' },
      }),
    ]);
    expect(events).toEqual([{ eventType: 'error', payload: { message: 'turn limit reached' } }]);
    expect(parser.outcome()).toMatchObject({ error: 'turn limit reached', reportedResult: true });
  });

  it('keeps the text before the last tool call as final result when nothing follows it', () => {
    const { parser } = parse([
      line({ type: 'message', role: 'assistant', content: 'Created the file.', delta: true }),
      line({ type: 'tool_use', tool_name: 'write_file', tool_id: 't1', parameters: {} }),
      line({ type: 'tool_result', tool_id: 't1', status: 'success', output: '' }),
      line({ type: 'result', status: 'success' }),
    ]);
    expect(parser.outcome().finalResult).toBe('Created the file.');
  });

  it('does not repeat the user prompt echoed back as a user message', () => {
    expect(parse([line({ type: 'message', role: 'user', content: 'the prompt' })]).events).toEqual([]);
  });

  it('turns non-JSON lines into text and stderr lines into stderr text', () => {
    const parser = createParser('gemini-stream-json', { cwd: '/code', executor: 'gemini', model: undefined });
    expect(parser.stdoutLine('YOLO mode is enabled.')).toEqual([
      { eventType: 'text', payload: { content: 'YOLO mode is enabled.', stream: 'stdout' } },
    ]);
    expect(parser.stderrLine('Loaded cached credentials.')).toEqual([
      { eventType: 'text', payload: { content: 'Loaded cached credentials.', stream: 'stderr' } },
    ]);
  });
});
