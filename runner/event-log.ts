import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../platform/log.js';
import { RunnerTaskIdSchema } from '../platform/runner-protocol.js';
import type { EventType, EventsPage, TaskEvent } from '../platform/runner-protocol.js';
import { markEvent } from '../platform/event-trace.js';
import { firstAfter, loadEventFile, syncMadeDirectories, syncPath } from './event-log-file.js';

export interface EventLogOptions {
  /** `<stateDir>/tasks/<taskId>/events.jsonl` holds each task's log. */
  stateDir: string;
  logger: Logger;
  now?: () => Date;
  /**
   * How many tasks' logs stay in memory once nobody uses them. A log with followers or appends in
   * flight is never evicted; an evicted one is read from disk again on its next use.
   */
  maxIdleTasks?: number;
  /** Makes a written batch durable (default: fdatasync); tests count or fail it. */
  syncFile?: (file: FileHandle) => Promise<void>;
}

export interface EventFilter {
  /** Only events with a larger seq (default -1: all). */
  after?: number;
  /** Only this prompt's events. */
  promptId?: string;
}

export interface EventFollower {
  /** Called synchronously, in seq order, once per event: the replay first, then live events. */
  onEvent(event: TaskEvent): void;
  /** The log was closed (the runner stops) or broke: no more events will come. */
  onEnd(): void;
}

interface Follower {
  filter: EventFilter;
  follower: EventFollower;
}

/** An event waiting for its batch to reach the disk, and whoever waits for it. */
interface PendingEvent {
  event: TaskEvent;
  resolve: (event: TaskEvent) => void;
  reject: (err: unknown) => void;
}

/** One task's log in memory: every durable event, in seq order, and the batch on its way to disk. */
class TaskLog {
  readonly followers = new Set<Follower>();
  file: FileHandle | undefined;
  /** Appended but not yet written: the next batch, written with one write and one fdatasync. */
  pending: PendingEvent[] = [];
  /** The running flush (it writes batches until none is pending), undefined when idle. */
  flushing: Promise<void> | undefined;
  /** The seq after the last durable event. */
  nextSeq: number;
  /** The seq the next append gets (ahead of nextSeq by the events pending or being written). */
  nextAssigned: number;
  /** A write failed: the file may end in half a line, so this copy takes no more appends. */
  broken = false;

  constructor(
    readonly taskId: string,
    readonly path: string,
    readonly events: TaskEvent[],
  ) {
    this.nextSeq = (events.at(-1)?.seq ?? -1) + 1;
    this.nextAssigned = this.nextSeq;
  }

  select(filter: EventFilter): TaskEvent[] {
    const from = firstAfter(this.events, filter.after ?? -1);
    const events = this.events.slice(from);
    return filter.promptId === undefined ? events : events.filter((e) => e.promptId === filter.promptId);
  }
}

interface Entry {
  /** Operations and followers using it; only an unused entry may be evicted. */
  users: number;
  loaded: Promise<TaskLog>;
  log?: TaskLog;
}

/** A follower may start from a seq not yet durable: live events up to it are not its to see. */
const matches = (filter: EventFilter, event: TaskEvent): boolean =>
  event.seq > (filter.after ?? -1) && (filter.promptId === undefined || filter.promptId === event.promptId);

/**
 * Each task's append-only event log, `<stateDir>/tasks/<taskId>/events.jsonl`, one JSON TaskEvent a
 * line. An event is written and fdatasynced before anyone can read it ("durable before it is
 * served"), so a client that saw seq N finds N again after any crash and seq never repeats.
 *
 * Group commit: appends made while a write is in flight wait for it and then go to disk together,
 * in seq order, with one write and one fdatasync; each resolves once its batch is durable. A busy
 * task thus pays one fdatasync per batch, not per event, and an idle one still writes at once.
 *
 * Memory: a task's events are loaded lazily on its first use and kept while it is used; at most
 * `maxIdleTasks` unused logs stay cached (least recently used evicted first).
 */
export class TaskEventLog {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => Date;
  private readonly maxIdleTasks: number;
  private readonly syncFile: (file: FileHandle) => Promise<void>;
  private closed = false;

  constructor(private readonly options: EventLogOptions) {
    this.now = options.now ?? (() => new Date());
    this.maxIdleTasks = options.maxIdleTasks ?? 16;
    this.syncFile = options.syncFile ?? ((file) => file.datasync());
  }

  /** Appends one event and resolves once it is on disk and delivered to followers. */
  async append(
    taskId: string,
    promptId: string,
    eventType: EventType,
    payload: Record<string, unknown>,
  ): Promise<TaskEvent> {
    return this.using(taskId, (log) => this.enqueue(log, promptId, eventType, payload));
  }

  /** Events after `filter.after` (of one prompt when given) and the task's last seq. */
  async read(taskId: string, filter: EventFilter = {}): Promise<EventsPage> {
    return this.using(taskId, (log) => ({ events: log.select(filter), lastSeq: log.nextSeq - 1 }));
  }

  /** The task's highest seq so far, -1 when it has none. */
  async lastSeq(taskId: string): Promise<number> {
    return this.using(taskId, (log) => log.nextSeq - 1);
  }

  /**
   * Replays the events matching `filter`, then delivers each new one as it becomes durable. Replay
   * and registration happen in one synchronous step, so nothing is missed or sent twice. Resolves
   * with the function that stops following (call it when the client goes away).
   */
  async follow(taskId: string, filter: EventFilter, follower: EventFollower): Promise<() => void> {
    this.assertOpen();
    const entry = this.acquire(taskId);
    let log: TaskLog;
    try {
      log = await entry.loaded;
    } catch (err) {
      this.release(taskId, entry);
      throw err;
    }
    const registration: Follower = { filter, follower };
    try {
      for (const event of log.select(filter)) follower.onEvent(event);
    } catch (err) {
      this.release(taskId, entry);
      throw err;
    }
    log.followers.add(registration);
    return () => {
      if (!log.followers.delete(registration)) return;
      this.release(taskId, entry);
    };
  }

  /** Waits for appends in flight, ends every follower and closes the files. */
  async close(): Promise<void> {
    this.closed = true;
    const logs = await Promise.allSettled([...this.entries.values()].map((entry) => entry.loaded));
    for (const result of logs) {
      if (result.status !== 'fulfilled') continue;
      const log = result.value;
      while (log.flushing !== undefined) await log.flushing;
      for (const { follower } of [...log.followers]) follower.onEnd();
      log.followers.clear();
      await log.file?.close();
      log.file = undefined;
    }
  }

  private async using<T>(taskId: string, work: (log: TaskLog) => T | Promise<T>): Promise<T> {
    this.assertOpen();
    const entry = this.acquire(taskId);
    try {
      return await work(await entry.loaded);
    } finally {
      this.release(taskId, entry);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the event log is closed');
  }

  private taskDir(taskId: string): string {
    // Ids become directory names: object names, never `..` or a slash.
    if (!RunnerTaskIdSchema.safeParse(taskId).success) throw new Error(`invalid task id ${taskId}`);
    return join(this.options.stateDir, 'tasks', taskId);
  }

  /** Takes a use of the task's entry, loading it on first use; moves it to the LRU's young end. */
  private acquire(taskId: string): Entry {
    let entry = this.entries.get(taskId);
    if (entry === undefined) {
      const path = join(this.taskDir(taskId), 'events.jsonl');
      const created: Entry = {
        users: 0,
        loaded: loadEventFile(path, this.options.logger).then((events) => {
          created.log = new TaskLog(taskId, path, events);
          return created.log;
        }),
      };
      entry = created;
    }
    this.entries.delete(taskId);
    this.entries.set(taskId, entry);
    entry.users += 1;
    return entry;
  }

  private release(taskId: string, entry: Entry): void {
    entry.users -= 1;
    if (entry.log === undefined && entry.users === 0) {
      // It failed to load: forget it, so the next use tries again.
      if (this.entries.get(taskId) === entry) this.entries.delete(taskId);
      return;
    }
    this.evictIdle();
  }

  private evictIdle(): void {
    const idle = [...this.entries].filter(([, e]) => e.users === 0 && e.log !== undefined);
    for (const [taskId, entry] of idle.slice(0, Math.max(0, idle.length - this.maxIdleTasks))) {
      this.entries.delete(taskId);
      const file = entry.log?.file;
      if (file === undefined) continue;
      file.close().catch((err: unknown) => {
        this.options.logger.warn({ err, taskId }, 'cannot close an event log');
      });
    }
  }

  /** Gives the event its seq and queues it for the next batch; resolves once that batch is durable. */
  private enqueue(
    log: TaskLog,
    promptId: string,
    eventType: EventType,
    payload: Record<string, unknown>,
  ): Promise<TaskEvent> {
    if (log.broken) throw new Error(`the event log ${log.path} is being repaired; retry`);
    const event: TaskEvent = {
      seq: log.nextAssigned,
      timestamp: this.now().toISOString(),
      promptId,
      eventType,
      payload,
    };
    log.nextAssigned += 1;
    markEvent('runnerRead', log.taskId, event.seq);
    const durable = new Promise<TaskEvent>((resolve, reject) => {
      log.pending.push({ event, resolve, reject });
    });
    // Started a microtask later, so that appends made in the same turn share the first batch too.
    log.flushing ??= Promise.resolve().then(() => this.flush(log));
    return durable;
  }

  /**
   * Writes batches until none is pending: each one write + one fdatasync, then served. Never
   * rejects. It marks the log idle in the same synchronous step as its last look at `pending`, so
   * an append never waits on a flush that has already decided to stop.
   */
  private async flush(log: TaskLog): Promise<void> {
    try {
      while (log.pending.length > 0 && !log.broken) await this.writeBatch(log);
      // A broken log takes nothing more: what was queued behind the failed batch fails as well.
      const refused = log.pending;
      log.pending = [];
      for (const waiting of refused)
        waiting.reject(new Error(`the event log ${log.path} is being repaired; retry`));
    } finally {
      log.flushing = undefined;
    }
  }

  /** Writes and syncs what is pending, then serves it; on failure breaks the log and fails the batch. */
  private async writeBatch(log: TaskLog): Promise<void> {
    const batch = log.pending;
    log.pending = [];
    try {
      const file = log.file ?? (await this.openFile(log));
      await file.appendFile(batch.map(({ event }) => `${JSON.stringify(event)}\n`).join(''), 'utf8');
      await this.syncFile(file);
    } catch (err) {
      this.breakLog(log);
      const failure = new Error(`cannot append to the event log ${log.path}`, { cause: err });
      for (const waiting of batch) waiting.reject(failure);
      return;
    }
    for (const { event, resolve } of batch) {
      markEvent('runnerDurable', log.taskId, event.seq);
      log.nextSeq = event.seq + 1;
      log.events.push(event);
      this.deliver(log, event);
      resolve(event);
    }
  }

  private deliver(log: TaskLog, event: TaskEvent): void {
    for (const registration of [...log.followers]) {
      if (!matches(registration.filter, event)) continue;
      try {
        registration.follower.onEvent(event);
      } catch (err) {
        log.followers.delete(registration);
        this.options.logger.warn({ err }, 'an event follower failed; it no longer follows');
      }
    }
  }

  /**
   * After a failed write the file may end in half a line: forget the in-memory copy so that the
   * next use reloads it (cutting the torn tail), and end followers so they resume from their seq.
   */
  private breakLog(log: TaskLog): void {
    log.broken = true;
    for (const [taskId, entry] of this.entries) {
      if (entry.log === log) this.entries.delete(taskId);
    }
    for (const { follower } of [...log.followers]) follower.onEnd();
    log.followers.clear();
    const file = log.file;
    log.file = undefined;
    file?.close().catch(() => undefined);
  }

  /** Opens the log for appending; a new file's directory entry is fsynced so the file survives a crash. */
  private async openFile(log: TaskLog): Promise<FileHandle> {
    const dir = dirname(log.path);
    const createdDir = await mkdir(dir, { recursive: true, mode: 0o700 });
    const isNew = log.events.length === 0;
    const file = await open(log.path, 'a', 0o600);
    if (isNew) await syncPath(dir);
    await syncMadeDirectories(createdDir, dir);
    log.file = file;
    return file;
  }
}
