import type { Task } from '../../crds/index.js';
import { presentTask, taskListItemOf } from '../../platform/task-record.js';
import type { TaskListItem, TaskPresentation, TaskRecord } from '../../platform/task-record.js';
import { openObjectJson } from '../json-text.js';
import type { JsonText } from '../json-text.js';
import { VersionedCache } from '../versioned-cache.js';

/** Enough for the tasks a busy installation reads repeatedly; one entry is a few kilobytes. */
const DEFAULT_CAPACITY = 4096;

interface PresentedTask {
  record: TaskRecord;
  listItem?: TaskListItem;
  /** The record's JSON text without its closing brace (json-text.ts), made on first use. */
  recordJson?: string;
  /** The list item's, likewise. */
  listItemJson?: string;
  /** Whole answers made from the record and one value that changes apart from it, by that value. */
  answers?: Map<string, JsonText>;
}

const listItemOf = (entry: PresentedTask): TaskListItem => (entry.listItem ??= taskListItemOf(entry.record));

/**
 * The task records of GET /v1/tasks/:id and the list, presented once per version of a task: a
 * record is a pure function of the task and the (fixed) presentation, and presenting is most of a
 * read's work (timestamps parsed and formatted, prompts merged with their status). Keyed by uid and
 * resourceVersion (VersionedCache), so an updated task is presented afresh. The records are shared:
 * callers copy before they add to one. Their JSON text is cached too: serializing a page of
 * records again on every read cost more than the rest of the read.
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
    return listItemOf(this.entry(task));
  }

  /** The record's JSON text without its closing brace, so a caller can append fields (json-text.ts). */
  recordJson(task: Task): string {
    const entry = this.entry(task);
    entry.recordJson ??= openObjectJson(entry.record);
    return entry.recordJson;
  }

  /**
   * An answer made of the record and `variant`, a value that changes apart from the task (its
   * workspace's status, a handful of values): kept with the task's version, so its bytes and ETag
   * (JsonText) are computed once per version and variant, not per read.
   */
  answer(task: Task, variant: string, make: () => JsonText): JsonText {
    const entry = this.entry(task);
    entry.answers ??= new Map();
    const known = entry.answers.get(variant);
    if (known !== undefined) return known;
    const made = make();
    entry.answers.set(variant, made);
    return made;
  }

  /** The list item's JSON text without its closing brace. */
  listItemJson(task: Task): string {
    const entry = this.entry(task);
    entry.listItemJson ??= openObjectJson(listItemOf(entry));
    return entry.listItemJson;
  }
}
