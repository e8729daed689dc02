import { useCallback } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { Conversation } from '../../components/conversation/conversation.js';
import { getSharedTask, sharedEventsUrl } from '../../http/tasks.js';
import { TaskHeader } from '../tasks/task-header.js';
import { useLiveTask } from '../tasks/use-live-task.js';

/** What the share link grants: the task and its conversation, read-only; no key, no session. */
function SharedTask({ token }: { token: string }) {
  const load = useCallback((signal: AbortSignal) => getSharedTask(token, signal), [token]);
  const eventsAfter = useCallback((after: number) => sharedEventsUrl(token, after), [token]);
  const { task, stream } = useLiveTask(load, eventsAfter);
  const value = task.value;
  if (value === undefined) {
    if (task.error?.status === 404) {
      return (
        <section class="not-found">
          <h1>Not shared</h1>
          <p>This link does not lead to a shared task: it may have been made private or deleted.</p>
        </section>
      );
    }
    if (task.error !== undefined) return <p class="error">{task.error.message}</p>;
    return <p class="loading">Loading…</p>;
  }
  return (
    <div class="task-page shared">
      <TaskHeader task={value} />
      <p class="read-only">A read-only view shared by its owner.</p>
      <Conversation rows={stream.rows} prompts={value.prompts} state={stream.state} />
    </div>
  );
}

export function SharePage() {
  const { params } = useRoute();
  const token = params.token ?? '';
  return <SharedTask key={token} token={token} />;
}
