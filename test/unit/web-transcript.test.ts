import { describe, expect, it } from '@jest/globals';
import { Transcript } from '../../web/src/components/conversation/transcript.js';
import type { TaskEvent } from '../../web/src/components/conversation/transcript.js';

const PROMPT = 'p1';

function event(
  seq: number,
  eventType: string,
  payload: Record<string, unknown>,
  promptId = PROMPT,
): TaskEvent {
  return { seq, timestamp: '2026-11-25T10:00:00.000Z', promptId, eventType, payload };
}

const line = (seq: number, content = `line ${seq}`) => event(seq, 'text', { content, stream: 'stdout' });

describe('the conversation transcript (web pages)', () => {
  it('takes each event once when a resumed stream sends it again', () => {
    const transcript = new Transcript();
    expect(transcript.add(line(0))).toBe(true);
    expect(transcript.add(line(1))).toBe(true);
    expect(transcript.add(line(1))).toBe(false);
    expect(transcript.add(line(0))).toBe(false);
    expect(transcript.rows).toEqual([
      expect.objectContaining({ kind: 'prompt', promptId: PROMPT }),
      expect.objectContaining({ kind: 'text', text: 'line 0\nline 1', events: 2 }),
    ]);
  });

  it('joins shell lines with newlines and an agent’s text fragments as they are', () => {
    const transcript = new Transcript();
    transcript.add(event(0, 'text', { content: 'Hel' }));
    transcript.add(event(1, 'text', { content: 'lo' }));
    transcript.add(event(2, 'thinking', { content: 'hmm' }));
    expect(transcript.rows.slice(1)).toEqual([
      expect.objectContaining({ kind: 'text', channel: 'text', text: 'Hello' }),
      expect.objectContaining({ kind: 'text', channel: 'thinking', text: 'hmm' }),
    ]);
  });

  it('folds 10,000 lines into a few hundred rows', () => {
    const transcript = new Transcript();
    for (let seq = 0; seq < 10_000; seq += 1) transcript.add(line(seq));
    expect(transcript.rows.length).toBeLessThanOrEqual(401);
    const text = transcript.rows.flatMap((row) => (row.kind === 'text' ? [row.text] : [])).join('\n');
    expect(text.split('\n')).toHaveLength(10_000);
    expect(transcript.lastSeq).toBe(9_999);
  });

  it('keeps stdout and stderr apart', () => {
    const transcript = new Transcript();
    transcript.add(line(0));
    transcript.add(event(1, 'text', { content: 'oops', stream: 'stderr' }));
    expect(transcript.rows.slice(1).map((row) => (row.kind === 'text' ? row.stream : row.kind))).toEqual([
      'stdout',
      'stderr',
    ]);
  });

  it('folds a tool result into its call', () => {
    const transcript = new Transcript();
    transcript.add(event(0, 'tool_use', { id: 't1', name: 'Bash', input: { command: 'ls' } }));
    transcript.add(event(1, 'text', { content: 'listing' }));
    transcript.add(event(2, 'tool_result', { id: 't1', output: 'a\nb', isError: false }));
    expect(transcript.rows[1]).toEqual(
      expect.objectContaining({
        kind: 'tool',
        name: 'Bash',
        input: { command: 'ls' },
        result: { output: 'a\nb', isError: false },
      }),
    );
    expect(transcript.rows).toHaveLength(3);
  });

  it('starts a prompt row where the next prompt’s events begin', () => {
    const transcript = new Transcript();
    transcript.add(line(0));
    transcript.add(event(1, 'text', { content: 'again', stream: 'stdout' }, 'p2'));
    expect(transcript.rows.map((row) => row.kind)).toEqual(['prompt', 'text', 'prompt', 'text']);
  });

  it('shows a prompt’s end, errors and its result, not its start', () => {
    const transcript = new Transcript();
    transcript.add(event(0, 'status', { status: 'running' }));
    transcript.add(event(1, 'error', { message: 'boom' }));
    transcript.add(event(2, 'result', { result: 'all done' }));
    transcript.add(event(3, 'status', { status: 'failed', error: 'exit 1' }));
    expect(transcript.rows.slice(1)).toEqual([
      expect.objectContaining({ kind: 'notice', level: 'error', text: 'boom' }),
      expect.objectContaining({ kind: 'result', text: 'all done' }),
      expect.objectContaining({ kind: 'notice', level: 'error', text: 'Prompt failed: exit 1' }),
    ]);
  });
});
