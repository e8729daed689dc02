import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createParser } from '../../runner/executors/formats/index.js';
import type { OutputParser } from '../../runner/executors/formats/index.js';
import type { ExecutorEvent } from '../../runner/executors/types.js';

// The transcript is the sample of `codex exec --json` in Codex's public documentation
// of `codex exec`; the other cases follow the documented event schema (exec_events.rs).
const TRANSCRIPT = readFileSync(new URL('./fixtures/executors/codex-json.jsonl', import.meta.url), 'utf8');

function parse(lines: string[]): { parser: OutputParser; events: ExecutorEvent[] } {
  const parser = createParser('codex-json', { cwd: '/code', executor: 'codex', model: 'gpt-5-codex' });
  return { parser, events: lines.flatMap((l) => parser.stdoutLine(l)) };
}
const line = (value: unknown): string => JSON.stringify(value);

describe('Codex exec --json parser', () => {
  it('maps the codex exec --json sample from its public docs: init, reasoning, a command and the answer', () => {
    expect(parse(TRANSCRIPT.split('\n')).events).toEqual([
      {
        eventType: 'init',
        payload: {
          cwd: '/code',
          executor: 'codex',
          model: 'gpt-5-codex',
          threadId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
        },
      },
      { eventType: 'thinking', payload: { content: '**Searching for README files**' } },
      {
        eventType: 'tool_use',
        payload: { id: 'item_1', name: 'command_execution', input: { command: 'bash -lc ls' } },
      },
      {
        eventType: 'tool_result',
        payload: {
          id: 'item_1',
          output: expect.stringContaining('README.md\n'),
          isError: false,
          exitCode: 0,
        },
      },
      { eventType: 'thinking', payload: { content: '**Checking repository root for README**' } },
      { eventType: 'text', payload: { content: 'Yep — there’s a `README.md` in the repository root.' } },
    ]);
  });

  it('takes the last agent message as final result and the turn usage from the documented sample', () => {
    expect(parse(TRANSCRIPT.split('\n')).parser.outcome()).toEqual({
      finalResult: 'Yep — there’s a `README.md` in the repository root.',
      usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122 },
      error: undefined,
      reportedResult: true,
    });
  });

  it('fails on a documented turn.failed event with its error message', () => {
    const { parser, events } = parse([
      line({ type: 'turn.failed', error: { message: 'stream disconnected' } }),
    ]);
    expect(events).toEqual([{ eventType: 'error', payload: { message: 'stream disconnected' } }]);
    expect(parser.outcome()).toMatchObject({ error: 'stream disconnected', reportedResult: false });
  });

  it('does not fail on a stream error when the turn still completes (a retried hiccup)', () => {
    const { parser } = parse([
      line({ type: 'error', message: 'Reconnecting... 1/5' }),
      line({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } }),
    ]);
    expect(parser.outcome().error).toBeUndefined();
  });

  it('fails on a stream error when no turn completes', () => {
    const { parser } = parse([line({ type: 'error', message: 'unexpected status 401 Unauthorized' })]);
    expect(parser.outcome().error).toBe('unexpected status 401 Unauthorized');
  });

  it('maps a documented mcp_tool_call item to tool_use and a failing tool_result', () => {
    const item = {
      id: 'item_5',
      type: 'mcp_tool_call',
      server: 'github',
      tool: 'get_issue',
      arguments: { n: 1 },
    };
    const { events } = parse([
      line({ type: 'item.started', item: { ...item, status: 'in_progress' } }),
      line({ type: 'item.completed', item: { ...item, status: 'failed', error: { message: 'not found' } } }),
    ]);
    expect(events).toEqual([
      { eventType: 'tool_use', payload: { id: 'item_5', name: 'github.get_issue', input: { n: 1 } } },
      { eventType: 'tool_result', payload: { id: 'item_5', output: 'not found', isError: true } },
    ]);
  });

  it('emits tool_use and tool_result together for a file_change, which is only sent completed', () => {
    const changes = [{ path: 'src/a.ts', kind: 'update' }];
    const { events } = parse([
      line({
        type: 'item.completed',
        item: { id: 'item_6', type: 'file_change', changes, status: 'completed' },
      }),
    ]);
    expect(events.map((e) => e.eventType)).toEqual(['tool_use', 'tool_result']);
  });

  it('reports a non-fatal error item as an error event without failing the run', () => {
    const { parser, events } = parse([
      line({ type: 'item.completed', item: { id: 'item_7', type: 'error', message: 'command timed out' } }),
    ]);
    expect(events).toEqual([{ eventType: 'error', payload: { message: 'command timed out', fatal: false } }]);
    expect(parser.outcome().error).toBeUndefined();
  });

  it('ignores unknown event types and item types', () => {
    const { events } = parse([
      line({ type: 'turn.started' }),
      line({ type: 'item.updated', item: { id: 'i', type: 'todo_list', items: [] } }),
      line({ type: 'something.new', x: 1 }),
    ]);
    expect(events).toEqual([]);
  });
});
