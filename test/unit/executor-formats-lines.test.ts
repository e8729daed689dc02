import { describe, expect, it } from '@jest/globals';
import { createParser } from '../../runner/executors/formats/index.js';
import { LINES_RESULT_MAX_CHARS } from '../../runner/executors/formats/lines.js';

const CONTEXT = { cwd: '/code', executor: 'shell', model: undefined };

describe('lines parser (shell executor)', () => {
  it('turns stdout and stderr lines into text events marked with their stream', () => {
    const parser = createParser('lines', CONTEXT);
    expect(parser.stdoutLine('out')).toEqual([
      { eventType: 'text', payload: { content: 'out', stream: 'stdout' } },
    ]);
    expect(parser.stderrLine('err')).toEqual([
      { eventType: 'text', payload: { content: 'err', stream: 'stderr' } },
    ]);
  });

  it('joins the stdout lines (not stderr) as final result', () => {
    const parser = createParser('lines', CONTEXT);
    parser.stdoutLine('a');
    parser.stderrLine('noise');
    parser.stdoutLine('b');
    expect(parser.outcome()).toEqual({ finalResult: 'a\nb', reportedResult: false });
  });

  it('keeps only the last 100,000 characters of stdout as final result', () => {
    const parser = createParser('lines', CONTEXT);
    for (let i = 0; i < 3000; i += 1) parser.stdoutLine(`${String(i).padStart(4, '0')} ${'x'.repeat(95)}`);
    const { finalResult } = parser.outcome();
    expect(finalResult).toHaveLength(LINES_RESULT_MAX_CHARS);
    expect(finalResult?.endsWith(`2999 ${'x'.repeat(95)}`)).toBe(true);
  });

  it('never starts the final result with half of a surrogate pair', () => {
    const parser = createParser('lines', CONTEXT);
    // 🙂 is two UTF-16 units; the trailing x puts the cut between the two halves of one.
    parser.stdoutLine(`${'🙂'.repeat(LINES_RESULT_MAX_CHARS)}x`);
    const { finalResult = '' } = parser.outcome();
    expect(finalResult.codePointAt(0)).toBe(0x1f642);
    expect(finalResult).toHaveLength(LINES_RESULT_MAX_CHARS - 1);
  });

  it('lets the runner send init: a plain executor has none of its own', () => {
    expect(createParser('lines', CONTEXT).providesInit).toBe(false);
  });
});
