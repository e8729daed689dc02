import './tasks.css';
import { useCallback } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorLine } from '../../components/error-line.js';
import { RequireSession } from '../../components/require-session.js';
import { useRefreshWhile } from '../../components/use-refresh.js';
import { useLoaded } from '../../components/use-loaded.js';
import { listTasks } from '../../http/tasks.js';
import type { TaskList } from '../../http/tasks.js';
import { can } from '../../session.js';
import { Time } from '../../components/time.js';
import { StatusBadge } from './status-badge.js';

const PAGE_SIZE = 25;
/** While a task on the page runs, the page is read again this often (statuses change). */
const RUNNING_REFRESH_MS = 5000;

/** `?offset=` of the address bar, so a page of the list can be linked and reloaded. */
function offsetOf(query: Record<string, string>): number {
  const offset = Number(query.offset ?? '0');
  return Number.isInteger(offset) && offset >= 0 ? offset : 0;
}

function TaskRows({ page }: { page: TaskList }) {
  if (page.data.length === 0) return <p class="empty">No tasks yet.</p>;
  return (
    <table class="tasks">
      <thead>
        <tr>
          <th>Title</th>
          <th>Status</th>
          <th>Executor</th>
          <th>Prompts</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {page.data.map((task) => (
          <tr key={task.id}>
            <td>
              <a href={`/tasks/${encodeURIComponent(task.id)}`}>{task.title}</a>
            </td>
            <td>
              <StatusBadge status={task.status} />
            </td>
            <td>{task.executor}</td>
            <td>{task.prompts.length}</td>
            <td>
              <Time iso={task.createdAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Pager({ page }: { page: TaskList }) {
  const from = page.total === 0 ? 0 : page.offset + 1;
  const to = page.offset + page.data.length;
  const previous = Math.max(0, page.offset - page.limit);
  return (
    <nav class="pager" aria-label="Pages">
      {page.offset > 0 && <a href={previous === 0 ? '/' : `/?offset=${previous}`}>← Newer</a>}
      <span>
        {from}–{to} of {page.total}
      </span>
      {to < page.total && <a href={`/?offset=${to}`}>Older →</a>}
    </nav>
  );
}

function TaskList() {
  const { query } = useLocation();
  const offset = offsetOf(query);
  const load = useCallback((signal: AbortSignal) => listTasks(offset, PAGE_SIZE, signal), [offset]);
  const { value, error, reload } = useLoaded(load);
  const running = value?.data.some((task) => task.status === 'running') === true;
  useRefreshWhile(running, reload, RUNNING_REFRESH_MS);
  if (!can('tasks:read')) return <p class="error">This key may not read tasks (scope tasks:read).</p>;
  return (
    <>
      <ErrorLine error={error?.message} />
      {value === undefined ? (
        error === undefined && <p class="loading">Loading…</p>
      ) : (
        <TaskRows page={value} />
      )}
      {value !== undefined && <Pager page={value} />}
    </>
  );
}

/** The organization's tasks, newest first, a page at a time (GET /v1/tasks with offset and limit). */
export function TasksPage() {
  return (
    <RequireSession>
      <h1>Tasks</h1>
      <TaskList />
    </RequireSession>
  );
}
