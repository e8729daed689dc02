import { useEffect, useState } from 'preact/hooks';
import { can, session } from '../../session.js';
import { WORKSPACES_PER_PAGE } from './workspace-api.js';
import { WorkspaceRow } from './workspace-row.js';
import { useWorkspaces } from './use-workspaces.js';
import '../../components/admin-controls.css';
import './workspaces.css';

/** The list of workspaces with their actions and a pager. */
function WorkspaceList({ canChange, canSeeTasks }: { canChange: boolean; canSeeTasks: boolean }) {
  const [offset, setOffset] = useState(0);
  const { page, error, track, replace, remove } = useWorkspaces(offset);
  // The last workspace of a later page went (deleted here or elsewhere): show the page before.
  useEffect(() => {
    if (page !== undefined && offset > 0 && page.total <= offset)
      setOffset(Math.max(0, offset - WORKSPACES_PER_PAGE));
  }, [page, offset]);
  if (page === undefined)
    return error === undefined ? <p class="muted">Loading…</p> : <p role="alert">{error}</p>;
  return (
    <>
      {error !== undefined && (
        <p class="action-error" role="alert">
          Could not refresh: {error}
        </p>
      )}
      {page.data.length === 0 ? (
        <p>
          No workspaces yet. A task without a workspace gets one; POST /v1/agent-computers makes one to keep.
        </p>
      ) : (
        <table class="admin workspaces">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Sandbox</th>
              <th scope="col">Created</th>
              <th scope="col">{canChange ? 'Actions' : ''}</th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((workspace) => (
              <WorkspaceRow
                key={workspace.id}
                workspace={workspace}
                canChange={canChange}
                canSeeTasks={canSeeTasks}
                track={track}
                onChanged={replace}
                onDeleted={remove}
              />
            ))}
          </tbody>
        </table>
      )}
      <Pager total={page.total} offset={offset} onOffset={setOffset} />
    </>
  );
}

function Pager({
  total,
  offset,
  onOffset,
}: {
  total: number;
  offset: number;
  onOffset: (at: number) => void;
}) {
  if (total <= WORKSPACES_PER_PAGE && offset === 0) return null;
  const last = Math.min(offset + WORKSPACES_PER_PAGE, total);
  return (
    <nav class="pager" aria-label="Pages of workspaces">
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => {
          onOffset(Math.max(0, offset - WORKSPACES_PER_PAGE));
        }}
      >
        Newer
      </button>
      <span>
        {offset + 1}–{last} of {total}
      </span>
      <button
        type="button"
        disabled={last >= total}
        onClick={() => {
          onOffset(offset + WORKSPACES_PER_PAGE);
        }}
      >
        Older
      </button>
    </nav>
  );
}

/** /workspaces: what the key may see and do decides what is shown (docs/api.md#authentication). */
export function WorkspacesPage() {
  const current = session.value;
  if (current === undefined) return <p class="muted">Loading…</p>;
  // Signed out: the app's SessionGuard sends the reader to /login and back.
  if (current === null) return null;
  return (
    <section class="admin-page">
      <h1>Workspaces</h1>
      {can('agent-computers:read') ? (
        <WorkspaceList canChange={can('agent-computers:write')} canSeeTasks={can('tasks:read')} />
      ) : (
        <p>This API key may not list workspaces (it lacks agent-computers:read).</p>
      )}
    </section>
  );
}
