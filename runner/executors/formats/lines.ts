import type { ExecutorEvent } from '../types.js';
import type { OutputParser, ParsedOutcome } from './types.js';

/** How much of a plain executor's stdout becomes its final result: the end is what a reader wants. */
export const LINES_RESULT_MAX_CHARS = 100_000;

/**
 * Plain output (the `shell` executor): every line is a `text` event marked with its stream, and the
 * final result is the tail of stdout.
 */
export class LinesParser implements OutputParser {
  readonly providesInit = false;
  /** stdout lines kept for the result, newest last; trimmed from the front once over the limit. */
  private readonly kept: string[] = [];
  private keptChars = 0;

  stdoutLine(line: string): ExecutorEvent[] {
    this.keep(line);
    return [{ eventType: 'text', payload: { content: line, stream: 'stdout' } }];
  }

  stderrLine(line: string): ExecutorEvent[] {
    return [{ eventType: 'text', payload: { content: line, stream: 'stderr' } }];
  }

  outcome(): ParsedOutcome {
    let finalResult = this.kept.join('\n').slice(-LINES_RESULT_MAX_CHARS);
    // The cut must not leave the second half of a surrogate pair at the start.
    if (/^[\udc00-\udfff]/.test(finalResult)) finalResult = finalResult.slice(1);
    return { finalResult, reportedResult: false };
  }

  private keep(line: string): void {
    this.kept.push(line);
    this.keptChars += line.length + 1;
    // Drop whole lines from the front while the rest still covers the limit; slice() trims the last bit.
    let first = this.kept[0];
    while (first !== undefined && this.keptChars - (first.length + 1) >= LINES_RESULT_MAX_CHARS) {
      this.kept.shift();
      this.keptChars -= first.length + 1;
      first = this.kept[0];
    }
  }
}

export const createLinesParser = (): OutputParser => new LinesParser();
