import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { StreamDoneSchema, TaskEventSchema, Transcript } from './transcript.js';
import type { Row, StreamDone } from './transcript.js';

/** connecting: before the first answer; live: reading; reconnecting: EventSource retries by itself. */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'done' | 'failed';

export interface EventStreamView {
  rows: readonly Row[];
  state: StreamState;
  /** The last `done` frame, once the stream has ended. */
  done: StreamDone | undefined;
  /** How many events the transcript holds (each counted once). */
  eventCount: number;
  /** Opens the stream again after `done`, from the last event shown (a follow-up was sent). */
  reopen: () => void;
}

/** A frame's `data` as JSON; anything unreadable is dropped by the schema that follows. */
function parseJson(data: unknown): unknown {
  if (typeof data !== 'string') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/**
 * Follows a task's event stream into a transcript. The browser's EventSource reconnects by itself
 * after a dropped connection and sends `Last-Event-ID`; the transcript drops any event it already
 * has, so nothing shows twice. Events are applied to the view once per frame, however fast they
 * come (a replay of 10,000 events is a few dozen renders, not 10,000).
 *
 * @param urlAfter the stream's URL reading events after a seq (-1: from the start)
 * @param onDone called with each `done` frame (the page refreshes its task record)
 */
export function useEventStream(
  urlAfter: (after: number) => string,
  onDone?: (done: StreamDone) => void,
): EventStreamView {
  const transcript = useRef(new Transcript());
  const counted = useRef(0);
  const [rows, setRows] = useState<readonly Row[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [done, setDone] = useState<StreamDone | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const doneRef = useRef(onDone);
  doneRef.current = onDone;

  useEffect(() => {
    const source = new EventSource(urlAfter(transcript.current.lastSeq));
    let frame: number | undefined;
    const flush = (): void => {
      frame = undefined;
      setRows(transcript.current.rows.slice());
    };
    source.onopen = () => {
      setState('live');
    };
    source.addEventListener('event', (message: MessageEvent<unknown>) => {
      const event = TaskEventSchema.safeParse(parseJson(message.data));
      if (!event.success || !transcript.current.add(event.data)) return;
      counted.current += 1;
      frame ??= requestAnimationFrame(flush);
    });
    source.addEventListener('done', (message: MessageEvent<unknown>) => {
      // The server closes the stream after `done`; EventSource would otherwise reconnect.
      source.close();
      if (frame !== undefined) cancelAnimationFrame(frame);
      flush();
      const parsed = StreamDoneSchema.safeParse(parseJson(message.data));
      setState('done');
      if (parsed.success) {
        setDone(parsed.data);
        doneRef.current?.(parsed.data);
      }
    });
    source.onerror = () => {
      // CLOSED: the server refused (401, 404); CONNECTING: the browser is already retrying.
      setState(source.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting');
    };
    return () => {
      source.close();
      if (frame !== undefined) cancelAnimationFrame(frame);
    };
  }, [urlAfter, generation]);

  const reopen = useCallback(() => {
    setState('connecting');
    setGeneration((n) => n + 1);
  }, []);

  return { rows, state, done, eventCount: counted.current, reopen };
}
