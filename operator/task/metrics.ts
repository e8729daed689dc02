import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/**
 * Task metrics (docs/architecture.md#observability). Labels are bounded: the executor (a configured name) and the
 * outcome, never a task id.
 */
export class TaskMetrics {
  /** Submitted → started: how long a prompt waited for its workspace and queue. */
  readonly startLatency: Histogram<'executor'>;
  readonly duration: Histogram<'executor' | 'status'>;
  readonly finished: Counter<'executor' | 'status'>;
  /** Artifact sync (operator/task/artifacts): files and bytes moved, by direction `to_store` / `to_workspace`. */
  readonly files: Counter<'direction'>;
  readonly bytes: Counter<'direction'>;
  /** Failed archive or sync attempts, by stage `events` / `artifacts` (each is retried with back-off). */
  readonly archiveErrors: Counter<'stage'>;
  readonly promptsArchived: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.startLatency = new Histogram({
      name: 'agentry_prompt_start_latency_seconds',
      help: 'Time from a prompt being submitted to its executor starting.',
      labelNames: ['executor'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      registers,
    });
    this.duration = new Histogram({
      name: 'agentry_prompt_duration_seconds',
      help: 'Time from a prompt starting to its end, by outcome.',
      labelNames: ['executor', 'status'],
      buckets: [1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
      registers,
    });
    this.finished = new Counter({
      name: 'agentry_prompts_finished_total',
      help: 'Prompts that reached a final status.',
      labelNames: ['executor', 'status'],
      registers,
    });
    this.files = new Counter({
      name: 'agentry_artifact_sync_files_total',
      help: 'Artifacts copied or deleted between workspaces and object storage, by direction.',
      labelNames: ['direction'],
      registers,
    });
    this.bytes = new Counter({
      name: 'agentry_artifact_sync_bytes_total',
      help: 'Artifact bytes copied between workspaces and object storage, by direction.',
      labelNames: ['direction'],
      registers,
    });
    this.archiveErrors = new Counter({
      name: 'agentry_archive_errors_total',
      help: 'Failed attempts to archive prompt events or sync artifacts, by stage.',
      labelNames: ['stage'],
      registers,
    });
    this.promptsArchived = new Counter({
      name: 'agentry_prompt_events_archived_total',
      help: 'Prompts whose events were archived to object storage.',
      registers,
    });
  }
}
