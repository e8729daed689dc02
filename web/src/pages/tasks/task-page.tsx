import { useCallback } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { Conversation } from '../../components/conversation/conversation.js';
import { RequireSession } from '../../components/require-session.js';
import { getTask, taskEventsUrl } from '../../http/tasks.js';
import { can } from '../../session.js';
import { ArtifactList } from './artifact-list.js';
import { FollowUpForm } from './follow-up-form.js';
import { TaskControls } from './task-controls.js';
import { TaskHeader } from './task-header.js';
import { useLiveTask } from './use-live-task.js';

/** The task page: its conversation as it streams, and what the key's scopes allow doing with it. */
function TaskScreen({ id }: { id: string }) {
  const load = useCallback((signal: AbortSignal) => getTask(id, signal), [id]);
  const eventsAfter = useCallback((after: number) => taskEventsUrl(id, after), [id]);
  const { task, stream, turns } = useLiveTask(load, eventsAfter);
  const value = task.value;
  if (value === undefined) {
    if (task.error?.status === 404) return <NotFoundTask />;
    if (task.error !== undefined) return <p class="error">{task.error.message}</p>;
    return <p class="loading">Loading…</p>;
  }
  const writable = can('tasks:write');
  return (
    <div class="task-page">
      <TaskHeader task={value} />
      {writable && <TaskControls task={value} changed={task.reload} />}
      <Conversation rows={stream.rows} prompts={value.prompts} state={stream.state} />
      {writable && <FollowUpForm taskId={value.id} sent={task.reload} />}
      {can('artifacts:read') && <ArtifactList workspaceId={value.workspaceId} version={turns} />}
    </div>
  );
}

/** Also what another organization's task looks like: the API answers 404 for it (docs/api.md#authentication). */
function NotFoundTask() {
  return (
    <section class="not-found">
      <h1>Task not found</h1>
      <p>
        There is no such task in your organization. <a href="/">All tasks</a>
      </p>
    </section>
  );
}

export function TaskPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  return (
    <RequireSession>
      <TaskScreen key={id} id={id} />
    </RequireSession>
  );
}
