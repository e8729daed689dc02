import { TruncatedText } from '../truncated-text.js';
import type { Row, ToolResult } from './transcript.js';

/** What a row needs from the conversation around it. */
export interface RowContext {
  /** A prompt's text and status by id (the task record's prompt history). */
  prompt: (promptId: string) => { text: string | undefined; status: string } | undefined;
  /** Whether a part of a row (a folded tool call, a cut text) is open; kept outside the row. */
  isOpen: (key: string) => boolean;
  setOpen: (key: string, open: boolean) => void;
}

/** A tool's input or output as text: strings as they are, anything else as indented JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}

/** One line of the input beside the tool's name (its command, its path…). */
function inputSummary(input: unknown): string {
  const text =
    typeof input === 'object' && input !== null
      ? Object.values(input).find((v) => typeof v === 'string')
      : input;
  const line = (typeof text === 'string' ? text : asText(text)).split('\n', 1)[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}

function PromptRow({ promptId, context }: { promptId: string; context: RowContext }) {
  const prompt = context.prompt(promptId);
  return (
    <div class="row prompt">
      <span class="who">Prompt</span>
      {prompt !== undefined && <span class={`status status-${prompt.status}`}>{prompt.status}</span>}
      <pre>{prompt?.text ?? ''}</pre>
    </div>
  );
}

/** TruncatedText's state, kept by the conversation under `key`. */
function expandable(key: string, context: RowContext): { expanded: boolean; onExpand: () => void } {
  return {
    expanded: context.isOpen(key),
    onExpand: () => {
      context.setOpen(key, true);
    },
  };
}

function ToolRow(props: {
  rowKey: string;
  name: string;
  input: unknown;
  result: ToolResult | undefined;
  context: RowContext;
}) {
  const { rowKey, context, result } = props;
  const more = (part: string) => expandable(`${rowKey}:${part}`, context);
  const state = result === undefined ? 'running' : result.isError ? 'error' : 'ok';
  return (
    <details
      class={`row tool tool-${state}`}
      open={context.isOpen(rowKey)}
      onToggle={(event) => {
        context.setOpen(rowKey, event.currentTarget.open);
      }}
    >
      <summary>
        <span class="tool-name">{props.name}</span>{' '}
        <span class="tool-input">{inputSummary(props.input)}</span>
        <span class="tool-state">{state === 'running' ? '…' : state === 'error' ? 'error' : 'done'}</span>
      </summary>
      {props.input !== undefined && (
        <TruncatedText class="tool-part" text={asText(props.input)} {...more('in')} />
      )}
      {result !== undefined && (
        <TruncatedText class="tool-part output" text={asText(result.output)} {...more('out')} />
      )}
    </details>
  );
}

/** One row of the conversation; every text in it is the event's own, escaped by Preact. */
export function ConversationRow({ row, context }: { row: Row; context: RowContext }) {
  switch (row.kind) {
    case 'prompt':
      return <PromptRow promptId={row.promptId} context={context} />;
    case 'text': {
      const kind = row.channel === 'thinking' ? 'thinking' : row.stream === 'stderr' ? 'stderr' : 'text';
      return <TruncatedText class={`row ${kind}`} text={row.text} {...expandable(row.key, context)} />;
    }
    case 'tool':
      return (
        <ToolRow rowKey={row.key} name={row.name} input={row.input} result={row.result} context={context} />
      );
    case 'result':
      return (
        <div class="row result">
          <span class="who">Result</span>
          <TruncatedText text={row.text} {...expandable(row.key, context)} />
        </div>
      );
    case 'notice':
      return <div class={`row notice notice-${row.level}`}>{row.text}</div>;
  }
}
