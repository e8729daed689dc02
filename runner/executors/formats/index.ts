import type { ExecutorInvocation } from '../../../platform/runner-protocol.js';
import { createClaudeParser } from './claude.js';
import { createCodexParser } from './codex.js';
import { createGeminiParser } from './gemini.js';
import { createLinesParser } from './lines.js';
import { createOpencodeParser } from './opencode.js';
import type { OutputParser, ParserContext } from './types.js';

export type ExecutorFormat = ExecutorInvocation['format'];
export type { OutputParser, ParsedOutcome, ParserContext } from './types.js';

/** The parser of an output format; the switch is exhaustive, so a new format fails to compile here. */
export function createParser(format: ExecutorFormat, context: ParserContext): OutputParser {
  switch (format) {
    case 'claude-stream-json':
      return createClaudeParser(context);
    case 'codex-json':
      return createCodexParser(context);
    case 'gemini-stream-json':
      return createGeminiParser(context);
    case 'opencode-json':
      return createOpencodeParser(context);
    case 'lines':
      return createLinesParser();
  }
}
