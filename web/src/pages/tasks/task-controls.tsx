import { ErrorLine } from '../../components/error-line.js';
import { useAction } from '../../components/use-action.js';
import { VISIBILITIES, cancelTask, setVisibility } from '../../http/tasks.js';
import type { Task, Visibility } from '../../http/tasks.js';

const VISIBILITY_LABELS: Record<Visibility, string> = {
  private: 'Private (only me)',
  shared: 'Shared (my organization)',
  public: 'Public (anyone with the link)',
};

const isVisibility = (value: string): value is Visibility =>
  (VISIBILITIES as readonly string[]).includes(value);

/**
 * Cancel and the visibility switch (PATCH /v1/tasks/:id/visibility), with the share link once the
 * task is public. Shown only to a key with tasks:write.
 */
export function TaskControls({ task, changed }: { task: Task; changed: () => void }) {
  const { busy, error, run } = useAction();
  const act = (action: () => Promise<unknown>) =>
    run(async () => {
      await action();
      changed();
    });
  return (
    <div class="task-controls">
      {task.status === 'running' && (
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={() => void act(() => cancelTask(task.id))}
        >
          Cancel
        </button>
      )}
      <label>
        Visibility{' '}
        <select
          value={task.visibility}
          disabled={busy}
          onChange={(event) => {
            const value = event.currentTarget.value;
            if (isVisibility(value)) void act(() => setVisibility(task.id, value));
          }}
        >
          {VISIBILITIES.map((v) => (
            <option key={v} value={v}>
              {VISIBILITY_LABELS[v]}
            </option>
          ))}
        </select>
      </label>
      {task.shareUrl !== null && (
        <p class="share-link">
          Share link: <a href={task.shareUrl}>{task.shareUrl}</a>
        </p>
      )}
      <ErrorLine error={error} />
    </div>
  );
}
