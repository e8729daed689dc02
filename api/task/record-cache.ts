import type { Task } from '../../crds/index.js';
import { presentTask, taskListItemOf } from '../../platform/task-record.js';
import type { TaskListItem, TaskPresentation, TaskRecord } from '../../platform/task-record.js';
import { VersionedCache } from '../versioned-cache.js';

/** Enough for the tasks a busy installation reads repeatedly; one entry is a few kilobytes. */
const DEFAULT_CAPACITY = 4096;

interface PresentedTask {
  record: TaskRecord;
  listItem?: TaskListItem;
}

/**
 * The task records of GET /v1/tasks/:id and the list, presented once per version of a task: a
 * record is a pure function of the task and the (fixed) presentation, and presenting is most of a
 * read's work (timestamps parsed and formatted, prompts merged with their status). Keyed by uid and
 * resourceVersion (VersionedCache), so an updated task is presented afresh. The records are shared:
 * callers copy before they add to one.
 */
export class TaskRecordCache {
  private readonly presented: VersionedCache<PresentedTask>;

  constructor(
    readonly presentation: TaskPresentation,
    capacity = DEFAULT_CAPACITY,
  ) {
    this.presented = new VersionedCache(capacity);
  }

  private entry(task: Task): PresentedTask {
    return this.presented.derive(task, (version) => ({ record: presentTask(version, this.presentation) }));
  }

  record(task: Task): TaskRecord {
    return this.entry(task).record;
  }

  listItem(task: Task): TaskListItem {
    const entry = this.entry(task);
    entry.listItem ??= taskListItemOf(entry.record);
    return entry.listItem;
  }
}
