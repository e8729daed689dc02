import type { ExecutorEvent } from '../types.js';
import {
  JsonLinesParser,
  arrayOf,
  definedOnly,
  errorEvent,
  initEvent,
  objectOf,
  stringOf,
} from './json-lines.js';
import type { JsonObject } from './json-lines.js';
import type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

/**
 * Claude Code `-p --output-format stream-json --verbose`: one message per line — a `system` message
 * with subtype `init`, then `assistant` messages (content blocks `text`, `thinking`, `tool_use`) and
 * `user` messages carrying `tool_result` blocks, and last a `result` message (`subtype` `success` or
 * `error_*`, `is_error`, `result`, `usage`, `total_cost_usd`).
 */
export class ClaudeParser extends JsonLinesParser {
  readonly providesInit = true;
  private result: JsonObject | undefined;
  private lastText: string | undefined;
  private failure: string | undefined;

  protected map(event: JsonObject): ExecutorEvent[] {
    switch (event.type) {
      case 'system':
        return event.subtype === 'init'
          ? [initEvent(this.context, event.model, definedOnly({ sessionId: stringOf(event.session_id) }))]
          : [];
      case 'assistant':
        return this.assistant(event);
      case 'user':
        return this.toolResults(event);
      case 'result':
        return this.finalResult(event);
      default:
        return [];
    }
  }

  outcome(): ParsedOutcome {
    const result = this.result;
    return {
      // Without a result message (a crash after some work) the last answer text is the best there is.
      finalResult: stringOf(result?.result) ?? this.lastText,
      usage: result === undefined ? undefined : claudeUsage(result),
      error: this.failure,
      reportedResult: result !== undefined,
    };
  }

  private assistant(event: JsonObject): ExecutorEvent[] {
    const parent = stringOf(event.parent_tool_use_id);
    // A sub-agent's messages name the Task tool call they belong to; the UI can nest them.
    const extra = parent === undefined ? {} : { parentToolUseId: parent };
    const events: ExecutorEvent[] = [];
    for (const block of arrayOf(objectOf(event.message)?.content)) {
      const mapped = assistantBlock(objectOf(block), extra);
      if (mapped === undefined) continue;
      if (mapped.eventType === 'text' && parent === undefined) this.lastText = String(mapped.payload.content);
      events.push(mapped);
    }
    return events;
  }

  private toolResults(event: JsonObject): ExecutorEvent[] {
    const events: ExecutorEvent[] = [];
    for (const block of arrayOf(objectOf(event.message)?.content)) {
      const item = objectOf(block);
      const id = stringOf(item?.tool_use_id);
      if (item?.type !== 'tool_result' || id === undefined) continue;
      events.push({
        eventType: 'tool_result',
        payload: { id, output: toolOutput(item.content), isError: item.is_error === true },
      });
    }
    return events;
  }

  private finalResult(event: JsonObject): ExecutorEvent[] {
    this.result = event;
    if (event.is_error !== true && event.subtype === 'success') return [];
    const errors = arrayOf(event.errors).filter((e): e is string => typeof e === 'string');
    this.failure =
      stringOf(event.result) ??
      (errors.length > 0
        ? errors.join('; ')
        : `Claude Code ended with ${stringOf(event.subtype) ?? 'an error'}`);
    return [errorEvent(this.failure)];
  }
}

function assistantBlock(block: JsonObject | undefined, extra: JsonObject): ExecutorEvent | undefined {
  switch (block?.type) {
    case 'text':
      return { eventType: 'text', payload: { ...extra, content: stringOf(block.text) ?? '' } };
    case 'thinking':
      return { eventType: 'thinking', payload: { ...extra, content: stringOf(block.thinking) ?? '' } };
    case 'tool_use':
      return {
        eventType: 'tool_use',
        payload: {
          ...extra,
          id: stringOf(block.id) ?? '',
          name: stringOf(block.name) ?? '',
          input: block.input ?? {},
        },
      };
    default:
      return undefined;
  }
}

/** A tool result's content is a string or a list of content blocks; text blocks are joined, others kept. */
function toolOutput(content: unknown): unknown {
  if (!Array.isArray(content)) return content ?? '';
  const blocks = content.map(objectOf);
  if (blocks.every((b) => b?.type === 'text')) return blocks.map((b) => stringOf(b?.text) ?? '').join('\n');
  return content;
}

function claudeUsage(result: JsonObject): Record<string, unknown> {
  return definedOnly({
    ...objectOf(result.usage),
    total_cost_usd: result.total_cost_usd,
    duration_ms: result.duration_ms,
    num_turns: result.num_turns,
  });
}

export const createClaudeParser = (context: ParserContext): OutputParser => new ClaudeParser(context);
