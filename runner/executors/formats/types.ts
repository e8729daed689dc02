import type { ExecutorEvent } from '../types.js';

/** What a parser knows of the run it reads: the fields of the `init` event. */
export interface ParserContext {
  cwd: string;
  executor: string;
  model: string | undefined;
}

/** What an executor's output said about how the run ended, read after its last line. */
export interface ParsedOutcome {
  /** The final answer, when the output carried one (the runner sends it as the `result` event). */
  finalResult?: string;
  usage?: Record<string, unknown>;
  /** The CLI reported its own failure (e.g. an error result); its `error` event was already emitted. */
  error?: string;
  /** The CLI produced a result of its own, so a failed run still gets a `result` event. */
  reportedResult: boolean;
}

/**
 * Turns one executor's output into docs/api.md#tasks events, one line at a time. Pure and synchronous:
 * the runner reads, parses and awaits each event in order. A parser never emits `result` (the runner
 * emits exactly one from `outcome()`), never throws on a malformed line, and ignores event types it
 * does not know, so a newer CLI cannot break a run.
 */
export interface OutputParser {
  /** The CLI's output starts with its own init event, which then replaces the runner's (one `init` per run). */
  readonly providesInit: boolean;
  stdoutLine(line: string): ExecutorEvent[];
  stderrLine(line: string): ExecutorEvent[];
  outcome(): ParsedOutcome;
}

export type ParserFactory = (context: ParserContext) => OutputParser;
