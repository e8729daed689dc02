import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createParser } from '../../runner/executors/formats/index.js';
import type { OutputParser } from '../../runner/executors/formats/index.js';
import type { ExecutorEvent } from '../../runner/executors/types.js';

// Samples written from opencode's public documentation and source of `opencode run --format json`
// (events step_start, text, reasoning, tool_use, step_finish, error, each with a `part`).
const TRANSCRIPT = readFileSync(new URL('./fixtures/executors/opencode-json.jsonl', import.meta.url), 'utf8');

function parse(lines: string[]): { parser: OutputParser; events: ExecutorEvent[] } {
  const parser = createParser('opencode-json', {
    cwd: '/code',
    executor: 'opencode',
    model: 'anthropic/claude',
  });
  return { parser, events: lines.flatMap((l) => parser.stdoutLine(l)) };
}
const line = (value: unknown): string => JSON.stringify(value);

describe('opencode run --format json parser', () => {
  it('maps an opencode run --format json transcript written from its public docs: reasoning, text, tools', () => {
    expect(parse(TRANSCRIPT.split('\n')).events).toEqual([
      { eventType: 'thinking', payload: { content: 'I need to see the files first.' } },
      { eventType: 'text', payload: { content: 'Let me look at the project.' } },
      {
        eventType: 'tool_use',
        payload: { id: 'call_01', name: 'bash', input: { command: 'ls', description: 'List files' } },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'call_01', output: 'README.md\npackage.json\n', isError: false },
      },
      {
        eventType: 'tool_use',
        payload: { id: 'call_02', name: 'read', input: { filePath: '/code/missing.md' } },
      },
      {
        eventType: 'tool_result',
        payload: { id: 'call_02', output: 'File not found: /code/missing.md', isError: true },
      },
      { eventType: 'text', payload: { content: 'The project has a README.md and a package.json.' } },
    ]);
  });

  it('takes the text after the last tool call as final result and sums the steps’ tokens and cost', () => {
    expect(parse(TRANSCRIPT.split('\n')).parser.outcome()).toEqual({
      finalResult: 'The project has a README.md and a package.json.',
      usage: {
        input_tokens: 35109,
        output_tokens: 15,
        reasoning_tokens: 10,
        cache_read_tokens: 17100,
        cache_write_tokens: 50,
        cost: 0.003,
      },
      error: undefined,
      reportedResult: false,
    });
  });

  it('has no init event of its own, so the runner sends its init', () => {
    expect(
      createParser('opencode-json', { cwd: '/', executor: 'opencode', model: undefined }).providesInit,
    ).toBe(false);
  });

  it('fails on a documented error event with the message of its data', () => {
    const { parser, events } = parse([
      line({
        type: 'error',
        sessionID: 's',
        error: { name: 'ProviderAuthError', data: { message: 'no API key' } },
      }),
    ]);
    expect(events).toEqual([{ eventType: 'error', payload: { message: 'no API key' } }]);
    expect(parser.outcome().error).toBe('no API key');
  });

  it('ignores step_start and unknown event types', () => {
    expect(
      parse([line({ type: 'step_start', part: {} }), line({ type: 'done', reason: 'idle' })]).events,
    ).toEqual([]);
  });
});
