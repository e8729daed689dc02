import { useEffect, useState } from 'preact/hooks';
import { failureMessage } from '../../components/failure-message.js';
import { Time } from '../../components/time.js';
import { listWorkspaceTasks } from './workspace-api.js';
import type { WorkspaceTasks as Tasks } from './workspace-api.js';

type Loaded = { state: 'loading' } | { state: 'failed'; message: string } | { state: 'loaded'; tasks: Tasks };

/** The tasks that ran on one workspace, newest first, each linking to its page. */
export function WorkspaceTasks({ workspaceId }: { workspaceId: string }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    listWorkspaceTasks(workspaceId).then(
      (tasks) => {
        if (current) setLoaded({ state: 'loaded', tasks });
      },
      (err: unknown) => {
        if (current) setLoaded({ state: 'failed', message: failureMessage(err) });
      },
    );
    return () => {
      current = false;
    };
  }, [workspaceId]);
  if (loaded.state === 'loading') return <p class="muted">Loading tasks…</p>;
  if (loaded.state === 'failed')
    return (
      <p class="action-error" role="alert">
        {loaded.message}
      </p>
    );
  const { data, total } = loaded.tasks;
  if (data.length === 0) return <p class="muted">No tasks have run here.</p>;
  return (
    <div>
      <ul class="workspace-tasks" aria-label="Tasks on this workspace">
        {data.map((task) => (
          <li key={task.id}>
            <a href={`/tasks/${encodeURIComponent(task.id)}`}>{task.title}</a>{' '}
            <span class={`status status-${task.status}`}>{task.status}</span> <Time iso={task.createdAt} />
          </li>
        ))}
      </ul>
      {total > data.length && (
        <p class="muted">
          The newest {data.length} of {total} tasks.
        </p>
      )}
    </div>
  );
}
