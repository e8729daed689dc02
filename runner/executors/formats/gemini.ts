import type { ExecutorEvent } from '../types.js';
import { JsonLinesParser, errorEvent, initEvent, objectOf, stringOf } from './json-lines.js';
import type { JsonObject } from './json-lines.js';
import type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

/**
 * Gemini CLI `--output-format stream-json`: `init` (session_id, model), `message` (role user or
 * assistant; assistant text arrives in `delta: true` chunks), `tool_use` (tool_name, tool_id,
 * parameters), `tool_result` (tool_id, status success|error, output, error), `error` (severity
 * warning|error: non-fatal by definition) and a last `result` (status, error, stats). The result
 * carries no text: the answer is what the model wrote after its last tool call.
 */
export class GeminiParser extends JsonLinesParser {
  readonly providesInit = true;
  /** Assistant text since the last tool call, and the last such stretch that was not empty. */
  private answer = '';
  private previousAnswer = '';
  private result: JsonObject | undefined;
  private failure: string | undefined;

  protected map(event: JsonObject): ExecutorEvent[] {
    switch (event.type) {
      case 'init':
        return [initEvent(this.context, event.model, { sessionId: stringOf(event.session_id) ?? null })];
      case 'message':
        return this.message(event);
      case 'tool_use':
        this.closeAnswer();
        return [toolUse(event)];
      case 'tool_result':
        return [toolResult(event)];
      case 'error':
        return [warning(event)];
      case 'result':
        return this.finalResult(event);
      default:
        return [];
    }
  }

  outcome(): ParsedOutcome {
    const stats = objectOf(this.result?.stats);
    return {
      finalResult: this.answer === '' ? this.previousAnswer : this.answer,
      usage: stats,
      error: this.failure,
      reportedResult: this.result !== undefined,
    };
  }

  private message(event: JsonObject): ExecutorEvent[] {
    const content = stringOf(event.content);
    // The user's own prompt is echoed back as a message: it is not output.
    if (event.role !== 'assistant' || content === undefined) return [];
    this.answer += content;
    return [{ eventType: 'text', payload: event.delta === true ? { content, delta: true } : { content } }];
  }

  private closeAnswer(): void {
    if (this.answer !== '') this.previousAnswer = this.answer;
    this.answer = '';
  }

  private finalResult(event: JsonObject): ExecutorEvent[] {
    this.result = event;
    if (event.status !== 'error') return [];
    this.failure = stringOf(objectOf(event.error)?.message) ?? 'Gemini CLI reported an error result';
    return [errorEvent(this.failure)];
  }
}

function toolUse(event: JsonObject): ExecutorEvent {
  return {
    eventType: 'tool_use',
    payload: {
      id: stringOf(event.tool_id) ?? '',
      name: stringOf(event.tool_name) ?? '',
      input: event.parameters ?? {},
    },
  };
}

/** Gemini's `error` events are non-fatal (warnings and recoverable errors); the result decides the outcome. */
function warning(event: JsonObject): ExecutorEvent {
  return errorEvent(stringOf(event.message) ?? 'Gemini CLI reported an error', {
    severity: stringOf(event.severity) ?? 'error',
    fatal: false,
  });
}

function toolResult(event: JsonObject): ExecutorEvent {
  const isError = event.status === 'error';
  const error = stringOf(objectOf(event.error)?.message);
  const output = stringOf(event.output) ?? (isError ? (error ?? '') : '');
  return { eventType: 'tool_result', payload: { id: stringOf(event.tool_id) ?? '', output, isError } };
}

export const createGeminiParser = (context: ParserContext): OutputParser => new GeminiParser(context);
