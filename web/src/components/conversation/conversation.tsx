import './conversation.css';
import { useCallback, useMemo, useRef, useState } from 'preact/hooks';
import type { Prompt } from '../../http/tasks.js';
import { VirtualList } from '../virtual-list.js';
import { ConversationRow } from './conversation-row.js';
import type { RowContext } from './conversation-row.js';
import type { Row } from './transcript.js';
import type { StreamState } from './use-event-stream.js';

/** A text row's first height guess: its lines at the conversation's line height, plus padding. */
const LINE_PX = 20;
const ROW_PADDING_PX = 14;

function estimate(row: Row): number {
  if (row.kind === 'text') {
    let lines = 1;
    for (let i = row.text.indexOf('\n'); i !== -1 && lines < 30; i = row.text.indexOf('\n', i + 1))
      lines += 1;
    return lines * LINE_PX + ROW_PADDING_PX;
  }
  return row.kind === 'prompt' ? 3 * LINE_PX + ROW_PADDING_PX : LINE_PX + ROW_PADDING_PX + 10;
}

const keyOf = (row: Row): string => row.key;

const STATE_LABELS: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  done: 'Finished',
  failed: 'The event stream is not available',
};

/**
 * A task's conversation: prompts, the agent's text and thinking, tool calls folded with their
 * results, errors and results, windowed so that only the rows near the viewport are in the DOM.
 */
export function Conversation(props: {
  rows: readonly Row[];
  prompts: readonly Prompt[];
  state: StreamState;
}) {
  const open = useRef(new Set<string>());
  const [, setOpenVersion] = useState(0);
  const prompts = useMemo(() => new Map(props.prompts.map((p) => [p.id, p])), [props.prompts]);
  const setOpen = useCallback((key: string, value: boolean) => {
    if (open.current.has(key) === value) return;
    if (value) open.current.add(key);
    else open.current.delete(key);
    setOpenVersion((n) => n + 1);
  }, []);
  const context: RowContext = {
    prompt: (id) => {
      const prompt = prompts.get(id);
      return prompt === undefined ? undefined : { text: prompt.prompt, status: prompt.status };
    },
    isOpen: (key) => open.current.has(key),
    setOpen,
  };
  return (
    <section class="conversation">
      <p class={`stream-state stream-${props.state}`} role="status">
        {STATE_LABELS[props.state]}
      </p>
      {props.rows.length === 0 && props.state !== 'failed' && <p class="empty">No events yet.</p>}
      <VirtualList
        class="conversation-rows"
        label="Conversation"
        items={props.rows}
        keyOf={keyOf}
        estimate={estimate}
        follow
        renderItem={(row) => <ConversationRow row={row} context={context} />}
      />
    </section>
  );
}
