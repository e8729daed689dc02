import type { OutboxEntry, Task, TaskStatusValue, WebhookEventType } from '../../crds/index.js';
import { presentTask } from '../../platform/task-record.js';
import type { TaskPresentation, TaskRecord } from '../../platform/task-record.js';

/** The task status an event reports: a task that was just created is already running (docs/api.md#tasks). */
const STATUS_OF_EVENT: Readonly<Record<WebhookEventType, TaskStatusValue>> = {
  'task.created': 'running',
  'task.running': 'running',
  'task.completed': 'completed',
  'task.failed': 'failed',
  'task.canceled': 'canceled',
};

export interface DeliveryBody {
  id: string;
  type: WebhookEventType;
  event: WebhookEventType;
  timestamp: string;
  taskId: string;
  data: Omit<TaskRecord, 'prompts'>;
}

/**
 * The body of a delivery (docs/api.md#webhooks): the task record as it is now, without prompts, with the
 * status of the event it reports (a retry of `task.running` still says running, with no completedAt,
 * after the task ended).
 */
export function deliveryBody(task: Task, entry: OutboxEntry, presentation: TaskPresentation): DeliveryBody {
  const { prompts: _prompts, ...record } = presentTask(task, presentation);
  const status = STATUS_OF_EVENT[entry.event];
  return {
    id: entry.id,
    type: entry.event,
    event: entry.event,
    timestamp: new Date(entry.occurredAt).toISOString(),
    taskId: task.metadata.name,
    data: { ...record, status, ...(status === 'running' ? { completedAt: null } : {}) },
  };
}
