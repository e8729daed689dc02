import './tasks.css';
import type { Task } from '../../http/tasks.js';
import { Time } from '../../components/time.js';
import { StatusBadge } from './status-badge.js';

/** A task's title, status and particulars, on its page and on its share page. */
export function TaskHeader({ task }: { task: Task }) {
  return (
    <header class="task-header">
      <h1>{task.title}</h1>
      <p class="particulars">
        <StatusBadge status={task.status} /> <span>{task.executor}</span>
        {task.model !== null && <span> · {task.model}</span>}
        <span>
          {' '}
          · {task.prompts.length} {task.prompts.length === 1 ? 'prompt' : 'prompts'} · started{' '}
          <Time iso={task.createdAt} />
        </span>
      </p>
    </header>
  );
}
