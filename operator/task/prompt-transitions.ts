import { entriesOf } from './prompt-progress.js';
import type { TaskMetrics } from './metrics.js';
import { TaskEventReasons } from '../../crds/index.js';
import type { PromptStatusEntry, Task } from '../../crds/index.js';
import type { EventRecorder } from '../../platform/events.js';
import type { Logger } from '../../platform/log.js';

export interface TransitionSinks {
  events?: EventRecorder | undefined;
  metrics?: TaskMetrics | undefined;
  logger: Logger;
}

const seconds = (from: string, to: string): number => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

/**
 * Kubernetes Events, logs and metrics for each prompt that changed state in this write: what
 * `kubectl describe task` shows and what dashboards count. Called after the status write succeeded.
 */
export async function recordPromptTransitions(
  sinks: TransitionSinks,
  task: Task,
  next: readonly PromptStatusEntry[],
): Promise<void> {
  const before = new Map(entriesOf(task).map((entry) => [entry.id, entry.status]));
  for (const entry of next) {
    const was = before.get(entry.id);
    if (was === entry.status) continue;
    const prompt = task.spec.prompts.find((p) => p.id === entry.id);
    const executor = prompt?.executor ?? task.spec.executor;
    sinks.logger.info(
      {
        task: task.metadata.name,
        namespace: task.metadata.namespace,
        prompt: entry.id,
        from: was,
        to: entry.status,
      },
      'prompt changed state',
    );
    await recordOne(sinks, task, entry, executor, prompt?.submittedAt);
  }
}

const EVENT_OF_END = {
  succeeded: { kind: 'Normal', reason: TaskEventReasons.PromptSucceeded },
  failed: { kind: 'Warning', reason: TaskEventReasons.PromptFailed },
  canceled: { kind: 'Normal', reason: TaskEventReasons.PromptCanceled },
} as const;

async function recordOne(
  sinks: TransitionSinks,
  task: Task,
  entry: PromptStatusEntry,
  executor: string,
  submittedAt: string | undefined,
): Promise<void> {
  const { events, metrics } = sinks;
  switch (entry.status) {
    case 'pending':
      return;
    case 'running':
      if (submittedAt !== undefined && entry.startedAt !== undefined)
        metrics?.startLatency.labels(executor).observe(seconds(submittedAt, entry.startedAt));
      await events?.record(
        task,
        'Normal',
        TaskEventReasons.PromptStarted,
        `prompt ${entry.id} is running (${executor})`,
      );
      return;
    case 'succeeded':
    case 'failed':
    case 'canceled':
      await recordEnd(sinks, task, entry, executor, entry.status);
  }
}

async function recordEnd(
  { events, metrics }: TransitionSinks,
  task: Task,
  entry: PromptStatusEntry,
  executor: string,
  status: keyof typeof EVENT_OF_END,
): Promise<void> {
  metrics?.finished.labels(executor, status).inc();
  if (entry.startedAt !== undefined && entry.completedAt !== undefined)
    metrics?.duration.labels(executor, status).observe(seconds(entry.startedAt, entry.completedAt));
  const { kind, reason } =
    entry.failureReason === 'budget_exceeded'
      ? ({ kind: 'Warning', reason: TaskEventReasons.BudgetExceeded } as const)
      : EVENT_OF_END[status];
  const message =
    status === 'failed'
      ? `prompt ${entry.id} failed: ${entry.error ?? 'no reason given'}`
      : `prompt ${entry.id} ${status}`;
  await events?.record(task, kind, reason, message);
}
