import { useState } from 'preact/hooks';
import { ConfirmAction } from '../../components/confirm-action.js';
import { Time } from '../../components/time.js';
import { deleteWorkspace, setWorkspaceMode } from './workspace-api.js';
import type { Workspace } from './workspace-api.js';
import { WorkspaceTasks } from './workspace-tasks.js';

export interface WorkspaceRowProps {
  workspace: Workspace;
  /** The key holds agent-computers:write: the actions are shown. */
  canChange: boolean;
  /** The key holds tasks:read: the tasks on it can be listed. */
  canSeeTasks: boolean;
  /** Runs an action's request; the page pauses its polling while any is in flight. */
  track: <T>(request: Promise<T>) => Promise<T>;
  onChanged: (workspace: Workspace) => void;
  onDeleted: (id: string) => void;
}

/** Where status is going when it has not caught up with what was asked (docs/api.md#states). */
function transition(workspace: Workspace): string | undefined {
  const { status, requestedMode } = workspace;
  if (requestedMode === 'hibernated' && status !== 'hibernated' && status !== 'error') return 'hibernating';
  if (requestedMode === 'running' && status === 'hibernated') return 'resuming';
  return undefined;
}

function WorkspaceStatus({ workspace }: { workspace: Workspace }) {
  const next = transition(workspace);
  return (
    <span class="workspace-status">
      <span class={`status status-${workspace.status}`} data-status={workspace.status}>
        {workspace.status}
      </span>
      {next !== undefined && <span class="muted"> → {next}</span>}
      {workspace.provisionError !== null && <div class="action-error">{workspace.provisionError}</div>}
    </span>
  );
}

function WorkspaceActions({ workspace, track, onChanged, onDeleted }: WorkspaceRowProps) {
  const { id, name } = workspace;
  const mode = async (action: 'stop' | 'start'): Promise<void> => {
    onChanged(await track(setWorkspaceMode(id, action)));
  };
  return (
    <span class="actions">
      {workspace.requestedMode === 'running' ? (
        // Keyed: a question asked about hibernating is never carried over to resuming.
        <ConfirmAction
          key="hibernate"
          label="Hibernate"
          subject={name}
          busyLabel="Hibernating…"
          question={`Hibernate ${name}? The machine stops; its disk is kept.`}
          run={() => mode('stop')}
        />
      ) : (
        <ConfirmAction
          key="resume"
          label="Resume"
          subject={name}
          busyLabel="Resuming…"
          question={`Resume ${name}?`}
          run={() => mode('start')}
        />
      )}
      <ConfirmAction
        label="Delete"
        subject={name}
        busyLabel="Deleting…"
        question={`Delete ${name} and its disk? This cannot be undone.`}
        danger
        run={async () => {
          await track(deleteWorkspace(id));
          onDeleted(id);
        }}
      />
    </span>
  );
}

/** One workspace: its status, sandbox and age, its actions, and (unfolded) the tasks on it. */
export function WorkspaceRow(props: WorkspaceRowProps) {
  const { workspace, canChange, canSeeTasks } = props;
  const [open, setOpen] = useState(false);
  const columns = 5;
  return (
    <>
      <tr data-workspace={workspace.id}>
        <td>
          {canSeeTasks ? (
            <button
              type="button"
              class="link"
              aria-expanded={open}
              onClick={() => {
                setOpen(!open);
              }}
            >
              <span aria-hidden="true">{open ? '▾' : '▸'} </span>
              {workspace.name}
            </button>
          ) : (
            workspace.name
          )}
        </td>
        <td>
          <WorkspaceStatus workspace={workspace} />
        </td>
        <td>
          <code>{workspace.sandboxId ?? '—'}</code>
        </td>
        <td>
          <Time iso={workspace.createdAt} />
        </td>
        <td>{canChange && <WorkspaceActions {...props} />}</td>
      </tr>
      {open && (
        <tr class="workspace-detail">
          <td colSpan={columns}>
            <WorkspaceTasks workspaceId={workspace.id} />
          </td>
        </tr>
      )}
    </>
  );
}
