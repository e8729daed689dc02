import type { ExecutorEvent } from '../types.js';
import { JsonLinesParser, errorEvent, objectOf, stringOf } from './json-lines.js';
import type { JsonObject } from './json-lines.js';
import type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

/**
 * `opencode run --format json`: one `{type, timestamp, sessionID, ...}` object per line — `text`
 * and `reasoning` (a finished `part` with `text`), `tool_use` (a finished tool `part`: `callID`,
 * `tool`, `state` {status completed|error, input, output, error}), `step_start`, `step_finish`
 * (`part.tokens`, `part.cost`) and `error` (`error` {name, data.message}). It has no init event and
 * no final result: the answer is the text written after the last tool call.
 */
export class OpencodeParser extends JsonLinesParser {
  readonly providesInit = false;
  private answer: string[] = [];
  private previousAnswer: string[] = [];
  private readonly tokens = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
  private steps = 0;
  private failure: string | undefined;

  protected map(event: JsonObject): ExecutorEvent[] {
    const part = objectOf(event.part);
    switch (event.type) {
      case 'text':
        return this.text(part);
      case 'reasoning':
        return [{ eventType: 'thinking', payload: { content: stringOf(part?.text) ?? '' } }];
      case 'tool_use':
        return part === undefined ? [] : this.tool(part);
      case 'step_finish':
        this.count(part);
        return [];
      case 'error':
        return [this.error(objectOf(event.error))];
      default:
        return [];
    }
  }

  outcome(): ParsedOutcome {
    const answer = this.answer.length > 0 ? this.answer : this.previousAnswer;
    const { input, output, reasoning, cacheRead, cacheWrite, cost } = this.tokens;
    return {
      finalResult: answer.join('\n'),
      usage:
        this.steps === 0
          ? undefined
          : {
              input_tokens: input,
              output_tokens: output,
              reasoning_tokens: reasoning,
              cache_read_tokens: cacheRead,
              cache_write_tokens: cacheWrite,
              cost,
            },
      error: this.failure,
      reportedResult: false,
    };
  }

  private text(part: JsonObject | undefined): ExecutorEvent[] {
    const content = stringOf(part?.text);
    if (content === undefined) return [];
    this.answer.push(content);
    return [{ eventType: 'text', payload: { content } }];
  }

  private tool(part: JsonObject): ExecutorEvent[] {
    if (this.answer.length > 0) this.previousAnswer = this.answer;
    this.answer = [];
    const state = objectOf(part.state);
    const id = stringOf(part.callID) ?? stringOf(part.id) ?? '';
    const isError = state?.status === 'error';
    const output = isError ? (stringOf(state.error) ?? '') : (state?.output ?? '');
    return [
      { eventType: 'tool_use', payload: { id, name: stringOf(part.tool) ?? '', input: state?.input ?? {} } },
      { eventType: 'tool_result', payload: { id, output, isError } },
    ];
  }

  private count(part: JsonObject | undefined): void {
    const tokens = objectOf(part?.tokens);
    const cache = objectOf(tokens?.cache);
    const add = (value: unknown): number => (typeof value === 'number' ? value : 0);
    this.steps += 1;
    this.tokens.input += add(tokens?.input);
    this.tokens.output += add(tokens?.output);
    this.tokens.reasoning += add(tokens?.reasoning);
    this.tokens.cacheRead += add(cache?.read);
    this.tokens.cacheWrite += add(cache?.write);
    this.tokens.cost += add(part?.cost);
  }

  private error(error: JsonObject | undefined): ExecutorEvent {
    const message =
      stringOf(objectOf(error?.data)?.message) ?? stringOf(error?.name) ?? 'opencode reported an error';
    this.failure = message;
    return errorEvent(message);
  }
}

export const createOpencodeParser = (context: ParserContext): OutputParser => new OpencodeParser(context);
