import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useEventStream } from '../../components/conversation/use-event-stream.js';
import type { EventStreamView } from '../../components/conversation/use-event-stream.js';
import { useLoaded } from '../../components/use-loaded.js';
import type { Loaded } from '../../components/use-loaded.js';
import { useRefreshWhile } from '../../components/use-refresh.js';
import type { Task } from '../../http/tasks.js';

/** How often a running task's record is read again (prompt statuses, new prompts' texts). */
const RUNNING_REFRESH_MS = 3000;
/** How often a finished one is: a follow-up from another client (or the owner, on the share page) shows. */
const IDLE_REFRESH_MS = 15_000;

export interface LiveTask {
  task: Loaded<Task>;
  stream: EventStreamView;
  /** Counts the task's finished turns: a reason to read what they changed (its artifacts). */
  turns: number;
}

/**
 * A task's record and its event stream, kept current: the record is read again while the task runs
 * and when the stream ends; a stream that ended while a new prompt was coming (a follow-up, from
 * this page or another client) is reopened from the last event shown.
 */
export function useLiveTask(
  load: (signal: AbortSignal) => Promise<Task>,
  eventsAfter: (after: number) => string,
): LiveTask {
  const task = useLoaded(load);
  const [turns, setTurns] = useState(0);
  const onDone = useCallback(() => {
    task.reload();
    setTurns((n) => n + 1);
  }, [task.reload]);
  const stream = useEventStream(eventsAfter, onDone);
  const status = task.value?.status;
  const { reload } = task;

  useRefreshWhile(status !== undefined, reload, status === 'running' ? RUNNING_REFRESH_MS : IDLE_REFRESH_MS);

  // A record read after the stream's `done` that still runs: a prompt came after the stream's end.
  const loadsAtDone = useRef<number | undefined>(undefined);
  const { state, reopen } = stream;
  const { loads } = task;
  useEffect(() => {
    if (state !== 'done') {
      loadsAtDone.current = undefined;
      return;
    }
    loadsAtDone.current ??= loads;
    if (status === 'running' && loads > loadsAtDone.current) reopen();
  }, [state, status, loads, reopen]);

  return { task, stream, turns };
}
