import { useState } from 'preact/hooks';
import { ApiFailure } from '../../http/client.js';
import { VISIBILITIES, cancelTask, setVisibility } from '../../http/tasks.js';
import type { Task, Visibility } from '../../http/tasks.js';

const VISIBILITY_LABELS: Record<Visibility, string> = {
  private: 'Private (only me)',
  shared: 'Shared (my organization)',
  public: 'Public (anyone with the link)',
};

const isVisibility = (value: string): value is Visibility =>
  (VISIBILITIES as readonly string[]).includes(value);

const messageOf = (err: unknown): string =>
  err instanceof ApiFailure ? err.message : 'The server could not be reached.';

/**
 * Cancel and the visibility switch (PATCH /v1/tasks/:id/visibility), with the share link once the
 * task is public. Shown only to a key with tasks:write.
 */
export function TaskControls({ task, changed }: { task: Task; changed: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const act = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      changed();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
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
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
