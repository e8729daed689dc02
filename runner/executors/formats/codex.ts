import type { ExecutorEvent } from '../types.js';
import { JsonLinesParser, arrayOf, errorEvent, initEvent, objectOf, stringOf } from './json-lines.js';
import type { JsonObject } from './json-lines.js';
import type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

/**
 * `codex exec --json`: `thread.started`, `turn.started`, `item.started` / `item.updated` /
 * `item.completed` (items `agent_message`, `reasoning`, `command_execution`, `file_change`,
 * `mcp_tool_call`, `web_search`, `todo_list`, `error`), then `turn.completed` with `usage` or
 * `turn.failed` with `error`; a top-level `error` reports a stream problem. The final answer is the
 * last `agent_message`.
 */
export class CodexParser extends JsonLinesParser {
  readonly providesInit = true;
  private lastMessage: string | undefined;
  private usage: Record<string, unknown> | undefined;
  private completed = false;
  private turnFailure: string | undefined;
  private streamError: string | undefined;
  /** Tool items announced by item.started: their completion then only adds the result. */
  private readonly started = new Set<string>();

  protected map(event: JsonObject): ExecutorEvent[] {
    switch (event.type) {
      case 'thread.started':
        return [initEvent(this.context, undefined, { threadId: stringOf(event.thread_id) ?? null })];
      case 'item.started':
        return this.itemStarted(objectOf(event.item));
      case 'item.completed':
        return this.itemCompleted(objectOf(event.item));
      case 'turn.completed':
        this.completed = true;
        this.usage = objectOf(event.usage);
        return [];
      case 'turn.failed':
        this.turnFailure = stringOf(objectOf(event.error)?.message) ?? 'the Codex turn failed';
        return [errorEvent(this.turnFailure)];
      case 'error':
        // Also sent for retried stream hiccups; it only decides the outcome when no turn completes.
        this.streamError = stringOf(event.message) ?? 'Codex reported an error';
        return [errorEvent(this.streamError)];
      default:
        return [];
    }
  }

  outcome(): ParsedOutcome {
    return {
      finalResult: this.lastMessage,
      usage: this.usage,
      error: this.turnFailure ?? (this.completed ? undefined : this.streamError),
      reportedResult: this.completed,
    };
  }

  private itemStarted(item: JsonObject | undefined): ExecutorEvent[] {
    const use = item === undefined ? undefined : toolUse(item);
    if (item === undefined || use === undefined) return [];
    this.started.add(String(use.payload.id));
    return [use];
  }

  private itemCompleted(item: JsonObject | undefined): ExecutorEvent[] {
    switch (item?.type) {
      case 'agent_message': {
        this.lastMessage = stringOf(item.text) ?? '';
        return [{ eventType: 'text', payload: { content: this.lastMessage } }];
      }
      case 'reasoning':
        return [{ eventType: 'thinking', payload: { content: stringOf(item.text) ?? '' } }];
      case 'error':
        // An error item is non-fatal by definition: the turn goes on.
        return [errorEvent(stringOf(item.message) ?? 'Codex reported an error', { fatal: false })];
      default:
        return item === undefined ? [] : this.toolCompleted(item);
    }
  }

  private toolCompleted(item: JsonObject): ExecutorEvent[] {
    const use = toolUse(item);
    const result = toolResult(item);
    if (use === undefined || result === undefined) return [];
    const announced = this.started.delete(String(use.payload.id));
    return announced ? [result] : [use, result];
  }
}

function toolUse(item: JsonObject): ExecutorEvent | undefined {
  const id = stringOf(item.id) ?? '';
  switch (item.type) {
    case 'command_execution':
      return {
        eventType: 'tool_use',
        payload: { id, name: 'command_execution', input: { command: item.command } },
      };
    case 'file_change':
      return {
        eventType: 'tool_use',
        payload: { id, name: 'file_change', input: { changes: arrayOf(item.changes) } },
      };
    case 'mcp_tool_call': {
      const name = `${stringOf(item.server) ?? 'mcp'}.${stringOf(item.tool) ?? 'tool'}`;
      return { eventType: 'tool_use', payload: { id, name, input: item.arguments ?? {} } };
    }
    case 'web_search':
      return { eventType: 'tool_use', payload: { id, name: 'web_search', input: { query: item.query } } };
    default:
      return undefined;
  }
}

function toolResult(item: JsonObject): ExecutorEvent | undefined {
  const describe = RESULTS[String(item.type)];
  if (describe === undefined) return undefined;
  const failed = item.status === 'failed' || item.status === 'declined';
  const { output, isError, ...extra } = describe(item);
  return {
    eventType: 'tool_result',
    payload: { ...extra, id: stringOf(item.id) ?? '', output, isError: failed || isError },
  };
}

interface ResultDetail {
  output: unknown;
  isError: boolean;
  [extra: string]: unknown;
}

/** Each tool item's output, and whether it failed beyond its status. */
const RESULTS: Partial<Record<string, (item: JsonObject) => ResultDetail>> = {
  command_execution: (item) => {
    const exitCode = typeof item.exit_code === 'number' ? item.exit_code : null;
    return { output: item.aggregated_output ?? '', isError: exitCode !== null && exitCode !== 0, exitCode };
  },
  file_change: (item) => ({ output: arrayOf(item.changes), isError: false }),
  mcp_tool_call: (item) => {
    const error = stringOf(objectOf(item.error)?.message);
    return { output: error ?? objectOf(item.result)?.content ?? '', isError: error !== undefined };
  },
  web_search: (item) => ({ output: item.action ?? '', isError: false }),
};

export const createCodexParser = (context: ParserContext): OutputParser => new CodexParser(context);
