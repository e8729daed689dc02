import { randomUUID } from 'node:crypto';
import { isTerminal } from '../../crds/index.js';
import type {
  OutboxEntry,
  PromptStatusEntry,
  Task,
  TaskStatusValue,
  Webhook,
  WebhookEventType,
} from '../../crds/index.js';
import { entriesOf } from './prompt-progress.js';

const TERMINAL_EVENT: Record<Exclude<TaskStatusValue, 'running'>, WebhookEventType> = {
  completed: 'task.completed',
  failed: 'task.failed',
  canceled: 'task.canceled',
};

/** A prompt that has run (or runs) now, and had not before. A prompt that ended between two looks still started. */
const startedNow = (before: PromptStatusEntry | undefined, after: PromptStatusEntry): boolean => {
  const ranBefore = before !== undefined && (before.status === 'running' || isTerminal(before.status));
  const runsNow = after.status === 'running' || (isTerminal(after.status) && after.startedAt !== undefined);
  return runsNow && !ranBefore;
};

/**
 * The webhook events of one status write (docs/api.md#webhooks): `task.created` on the first write,
 * `task.running` when a prompt starts (a follow-up prompt too), and `task.<outcome>` when the task
 * leaves `running`. Pure: the caller writes them into the outbox in that same status write.
 */
export function transitionEvents(
  task: Task,
  nextEntries: readonly PromptStatusEntry[],
  nextStatus: TaskStatusValue,
): WebhookEventType[] {
  const events: WebhookEventType[] = [];
  if (task.status?.status === undefined) events.push('task.created');
  const before = new Map(entriesOf(task).map((entry) => [entry.id, entry]));
  if (nextEntries.some((entry) => startedNow(before.get(entry.id), entry))) events.push('task.running');
  const wasRunning = (task.status?.status ?? 'running') === 'running';
  if (wasRunning && nextStatus !== 'running') events.push(TERMINAL_EVENT[nextStatus]);
  return events;
}

/** One outbox entry per event and active webhook subscribed to it; its id is the delivery's webhook-id. */
export function outboxEntriesFor(
  webhooks: readonly Webhook[],
  events: readonly WebhookEventType[],
  now: Date,
): OutboxEntry[] {
  const at = now.toISOString();
  return events.flatMap((event) =>
    webhooks
      .filter(
        (webhook) => webhook.status?.isActive !== false && webhook.metadata.deletionTimestamp === undefined,
      )
      .filter((webhook) => webhook.spec.events.includes(event))
      .map((webhook) => ({
        id: randomUUID(),
        webhook: webhook.metadata.name,
        event,
        occurredAt: at,
        attempts: 0,
        nextAttemptAt: at,
      })),
  );
}
