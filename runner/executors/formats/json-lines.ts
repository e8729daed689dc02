import type { ExecutorEvent } from '../types.js';
import type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const objectOf = (value: unknown): JsonObject | undefined => (isObject(value) ? value : undefined);

export const stringOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

export const arrayOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export const text = (content: string, stream: 'stdout' | 'stderr'): ExecutorEvent => ({
  eventType: 'text',
  payload: { content, stream },
});

export const errorEvent = (message: string, extra: JsonObject = {}): ExecutorEvent => ({
  eventType: 'error',
  payload: { ...extra, message },
});

/** The runner's init fields, with what the CLI reported about itself (its model wins: it is the one in use). */
export function initEvent(context: ParserContext, reportedModel: unknown, extra: JsonObject): ExecutorEvent {
  return {
    eventType: 'init',
    payload: {
      ...extra,
      cwd: context.cwd,
      executor: context.executor,
      model: stringOf(reportedModel) ?? context.model ?? null,
    },
  };
}

/** Only the keys whose value is defined: usage records stay free of `undefined`. */
export function definedOnly(record: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/**
 * Shared shape of the JSON-lines CLIs: one JSON object per stdout line. A line that is not a JSON
 * object (a banner, a warning) becomes plain text, and a mapping that trips over an unexpected shape
 * falls back to the raw line too: a CLI upgrade must degrade the display, never the run.
 */
export abstract class JsonLinesParser implements OutputParser {
  abstract readonly providesInit: boolean;

  constructor(protected readonly context: ParserContext) {}

  stdoutLine(line: string): ExecutorEvent[] {
    const trimmed = line.trim();
    if (trimmed === '') return [];
    const value = parseObject(trimmed);
    if (value === undefined) return [text(line, 'stdout')];
    try {
      return this.map(value);
    } catch {
      return [text(line, 'stdout')];
    }
  }

  stderrLine(line: string): ExecutorEvent[] {
    return line.trim() === '' ? [] : [text(line, 'stderr')];
  }

  abstract outcome(): ParsedOutcome;

  /** The events of one JSON object of the CLI's output; [] for types it does not map. */
  protected abstract map(event: JsonObject): ExecutorEvent[];
}

function parseObject(line: string): JsonObject | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return objectOf(JSON.parse(line));
  } catch {
    return undefined;
  }
}
