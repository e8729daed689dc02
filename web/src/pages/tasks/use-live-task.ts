import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useEventStream } from '../../components/conversation/use-event-stream.js';
import type { EventStreamView } from '../../components/conversation/use-event-stream.js';
import type { StreamDone } from '../../components/conversation/transcript.js';
import { useLoaded } from '../../components/use-loaded.js';
import type { Loaded } from '../../components/use-loaded.js';
import type { Task } from '../../http/tasks.js';

/** How often a running task's record is read again (prompt statuses, new prompts' texts). */
const RUNNING_REFRESH_MS = 3000;

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

  useEffect(() => {
    if (status !== 'running') return undefined;
    const timer = setInterval(reload, RUNNING_REFRESH_MS);
    return () => {
      clearInterval(timer);
    };
  }, [status, reload]);

  // Once per `done`: a record read after it that still runs means a prompt came after the stream's end.
  const reopenedFor = useRef<StreamDone | undefined>(undefined);
  const { done, state, reopen } = stream;
  useEffect(() => {
    if (state !== 'done' || status !== 'running' || done === undefined || reopenedFor.current === done)
      return;
    reopenedFor.current = done;
    reopen();
  }, [state, status, done, reopen]);

  return { task, stream, turns };
}
