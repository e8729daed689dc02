import * as z from 'zod/mini';

/**
 * A task's events (docs/api.md#events) folded into the rows a conversation shows: consecutive text
 * (or thinking) events of one prompt and stream become one row, so 10,000 shell lines are a few
 * hundred rows; a tool call and its result are one row. Each event counts once, by its seq, however
 * often a reconnecting stream sends it.
 */

export const TaskEventSchema = z.object({
  seq: z.number(),
  timestamp: z.string(),
  promptId: z.string(),
  eventType: z.string(),
  payload: z.record(z.string(), z.unknown()),
});
export type TaskEvent = z.infer<typeof TaskEventSchema>;

/** The stream's closing frame: every prompt it follows is final. */
export const StreamDoneSchema = z.object({
  status: z.string(),
  lastSeq: z.number(),
  finalResult: z.nullable(z.string()),
});
export type StreamDone = z.infer<typeof StreamDoneSchema>;

export interface ToolResult {
  output: unknown;
  isError: boolean;
}

/** What a row says; `key` is stable for the row's life (the seq of its first event). */
export type Row =
  | { kind: 'prompt'; key: string; promptId: string }
  | {
      kind: 'text';
      key: string;
      promptId: string;
      channel: 'text' | 'thinking';
      /** `stdout`/`stderr` for the shell executor, whose events are whole lines. */
      stream: string | undefined;
      text: string;
      events: number;
    }
  | { kind: 'tool'; key: string; name: string; input: unknown; result: ToolResult | undefined }
  | { kind: 'result'; key: string; text: string }
  | { kind: 'notice'; key: string; level: 'error' | 'warning' | 'info'; text: string };

/** A text row takes at most this many events or characters: under TruncatedText's cut, so a row shows whole. */
const GROUP_MAX_EVENTS = 25;
const GROUP_MAX_CHARS = 1800;

const TERMINAL_STATUSES = new Set(['succeeded', 'failed', 'canceled']);

function stringField(payload: Record<string, unknown>, name: string): string | undefined {
  const value = payload[name];
  return typeof value === 'string' ? value : undefined;
}

export class Transcript {
  /** The highest seq taken; a stream reopened after it starts there. */
  lastSeq = -1;
  readonly rows: Row[] = [];
  /** Where each prompt's tool calls are, by `<promptId> <toolId>`: a result folds into its call. */
  private readonly toolRows = new Map<string, number>();
  private currentPrompt: string | undefined;

  /** Takes one event; false when it was already taken (a resumed stream's overlap). */
  add(event: TaskEvent): boolean {
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    if (event.promptId !== this.currentPrompt) {
      this.currentPrompt = event.promptId;
      this.rows.push({ kind: 'prompt', key: `p${event.promptId}`, promptId: event.promptId });
    }
    this.fold(event);
    return true;
  }

  private fold(event: TaskEvent): void {
    const { payload } = event;
    const key = String(event.seq);
    switch (event.eventType) {
      case 'text':
      case 'thinking':
        this.addText(event, event.eventType);
        return;
      case 'tool_use':
        this.addToolCall(event);
        return;
      case 'tool_result':
        this.addToolResult(event);
        return;
      case 'result':
        this.rows.push({ kind: 'result', key, text: stringField(payload, 'result') ?? '' });
        return;
      case 'error':
        this.rows.push({ kind: 'notice', key, level: 'error', text: stringField(payload, 'message') ?? '' });
        return;
      case 'warning':
        this.rows.push({
          kind: 'notice',
          key,
          level: 'warning',
          text: stringField(payload, 'message') ?? '',
        });
        return;
      default:
        this.addInfo(event);
    }
  }

  private addText(event: TaskEvent, channel: 'text' | 'thinking'): void {
    const content = stringField(event.payload, 'content') ?? '';
    const stream = stringField(event.payload, 'stream');
    const last = this.rows.at(-1);
    if (
      last?.kind === 'text' &&
      last.channel === channel &&
      last.stream === stream &&
      last.events < GROUP_MAX_EVENTS &&
      last.text.length < GROUP_MAX_CHARS
    ) {
      // Shell events are lines; an agent's are fragments of one message.
      const text = stream === undefined ? last.text + content : `${last.text}\n${content}`;
      // A new object: the row's view re-renders, the others keep theirs.
      this.rows[this.rows.length - 1] = { ...last, text, events: last.events + 1 };
      return;
    }
    const key = String(event.seq);
    this.rows.push({
      kind: 'text',
      key,
      promptId: event.promptId,
      channel,
      stream,
      text: content,
      events: 1,
    });
  }

  private addToolCall(event: TaskEvent): void {
    const toolId = stringField(event.payload, 'id') ?? String(event.seq);
    this.toolRows.set(`${event.promptId} ${toolId}`, this.rows.length);
    this.rows.push({
      kind: 'tool',
      key: String(event.seq),
      name: stringField(event.payload, 'name') ?? 'tool',
      input: event.payload.input,
      result: undefined,
    });
  }

  private addToolResult(event: TaskEvent): void {
    const result = { output: event.payload.output, isError: event.payload.isError === true };
    const index = this.toolRows.get(`${event.promptId} ${stringField(event.payload, 'id') ?? ''}`);
    const call = index === undefined ? undefined : this.rows[index];
    if (index !== undefined && call?.kind === 'tool') {
      this.rows[index] = { ...call, result };
      return;
    }
    // A result without its call (the call came before a resumed stream's start): shown alone.
    this.rows.push({ kind: 'tool', key: String(event.seq), name: 'tool result', input: undefined, result });
  }

  /** `init` and final `status` transitions; a prompt's `running` says nothing the page does not show. */
  private addInfo(event: TaskEvent): void {
    const key = String(event.seq);
    const { payload } = event;
    if (event.eventType === 'init') {
      // Not the cwd: a server path says nothing to a reader (and the share page is public).
      const parts = [stringField(payload, 'executor'), stringField(payload, 'model')];
      this.rows.push({ kind: 'notice', key, level: 'info', text: parts.filter(Boolean).join(' · ') });
      return;
    }
    const status = stringField(payload, 'status');
    if (event.eventType !== 'status' || status === undefined || !TERMINAL_STATUSES.has(status)) return;
    const error = stringField(payload, 'error');
    const text = error === undefined ? `Prompt ${status}` : `Prompt ${status}: ${error}`;
    this.rows.push({ kind: 'notice', key, level: status === 'failed' ? 'error' : 'info', text });
  }
}
