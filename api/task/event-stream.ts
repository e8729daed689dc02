import type { ServerResponse } from 'node:http';
import { allPromptsRecordedTerminal, clientTaskStatus, promptEntryOf } from '../../crds/index.js';
import type { Task } from '../../crds/index.js';
import { markEvent, traceNow } from '../../platform/event-trace.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Logger } from '../../platform/log.js';
import type { ObjectStore } from '../../platform/objectstore/types.js';
import type { RunnerClient } from '../../platform/runner-client.js';
import type { EventFrame } from '../../platform/runner-event-frames.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import type { ReadModel } from '../read-model.js';
import { isArchived, readArchivedEvents } from './archived-events.js';
import { runnerOf } from './runner-access.js';

/** How long to wait before reconnecting to a runner whose stream ended or failed. */
const RECONNECT_MS = 1000;
/** How often a stream waiting for its workspace looks again when no change wakes it first. */
const POLL_MS = 1000;

export interface TaskEventStreamOptions {
  readModel: ReadModel;
  installationKey: InstallationKey;
  logger: Logger;
  keepaliveMs: number;
  namespace: string;
  taskId: string;
  promptId: string | undefined;
  /** Events with a seq above this are sent (-1: from the start). */
  after: number;
  /** The task as cached, or undefined once the caller may no longer see it (deleted, made private). */
  current: () => Task | undefined;
  /** Where the operator archives finished prompts' events; without it only the runner is read. */
  objectStore?: ObjectStore | undefined;
}

type FollowOutcome = 'recheck' | 'retry';

/** `id`, `event`, `data` (docs/api.md#tasks); JSON.stringify never emits a raw newline, so one data line. */
const eventFrame = (event: TaskEvent): string =>
  `id: ${event.seq}\nevent: event\ndata: ${JSON.stringify(event)}\n\n`;

/**
 * GET /tasks/:id/events (docs/api.md#tasks, docs/architecture.md#the-life-of-a-task step 5): the task's events as server-sent
 * events: first what the operator archived to object storage (finished prompts), then the live tail
 * proxied from the workspace's runner; resumable, each event exactly once across reconnects (seq
 * never repeats, never skips), closed with `done` only once the operator has recorded every
 * considered prompt terminal and the client has every event up to the highest recorded `lastSeq`.
 * A finished, archived task replays and ends with `done` while its workspace sleeps or after it is
 * gone; a finished task whose events were not archived (no object storage) ends with what it had.
 */
export class TaskEventStream {
  private cursor: number;
  private readonly abort = new AbortController();
  /** When the client opened the stream (performance.now()), for the debug line of its first follow. */
  private readonly openedAt = performance.now();

  constructor(
    private readonly options: TaskEventStreamOptions,
    private readonly res: ServerResponse,
  ) {
    this.cursor = options.after;
  }

  /** Streams until `done`, the task's deletion, or the client leaving; every timer and request ends with it. */
  async run(): Promise<void> {
    const onClose = (): void => {
      this.abort.abort();
    };
    this.res.on('close', onClose);
    // A client that left before the stream began sends no further close: notice it now.
    if (this.res.socket === null || this.res.socket.destroyed) this.abort.abort();
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    });
    this.res.flushHeaders();
    const keepalive = setInterval(() => {
      if (!this.res.writableEnded) this.res.write(': keepalive\n\n');
    }, this.options.keepaliveMs);
    try {
      await this.loop();
    } finally {
      clearInterval(keepalive);
      this.res.off('close', onClose);
      this.abort.abort();
      if (!this.res.writableEnded) this.res.end();
    }
  }

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  private async loop(): Promise<void> {
    while (!this.signal.aborted) {
      const task = this.options.current();
      if (task === undefined) return; // deleted meanwhile: every endpoint answers 404 for it now
      if (this.doneDue(task)) {
        await this.sendDone(task);
        return;
      }
      await this.replayArchived(task);
      if (this.doneDue(task)) {
        await this.sendDone(task);
        return;
      }
      const runner = runnerOf(this.options.readModel, this.options.installationKey, task);
      if (runner === undefined) {
        // Finished, and the workspace sleeps or is gone: its remaining events are out of reach.
        if (allPromptsRecordedTerminal(task, this.options.promptId)) {
          await this.sendDone(task);
          return;
        }
        await this.waitForChange(task.spec.workspace, POLL_MS);
        continue;
      }
      this.options.logger.debug(
        { task: this.options.taskId, waitedMs: Math.round(performance.now() - this.openedAt) },
        "following the runner's event stream",
      );
      if ((await this.follow(runner)) === 'retry') await this.waitForChange(undefined, RECONNECT_MS);
    }
  }

  /** The prompts this stream is about (one with `promptId`, else all). */
  private considered(task: Task): Task['spec']['prompts'] {
    return task.spec.prompts.filter(
      (prompt) => this.options.promptId === undefined || prompt.id === this.options.promptId,
    );
  }

  /**
   * Sends archived events after the cursor, in seq order. When every considered prompt with events
   * is archived, the archive holds them all; otherwise (some prompt's events live only on the
   * runner, possibly interleaved with archived ones: a pending prompt canceled while another runs)
   * only the gap-free run after the cursor is sent, and the runner serves the rest.
   */
  private async replayArchived(task: Task): Promise<void> {
    const store = this.options.objectStore;
    if (store === undefined) return;
    const considered = this.considered(task);
    const unread = considered.filter(
      (prompt) =>
        isArchived(task, prompt.id) && (promptEntryOf(task, prompt.id)?.lastSeq ?? -1) > this.cursor,
    );
    if (unread.length === 0) return;
    const complete = considered.every(
      (prompt) => isArchived(task, prompt.id) || promptEntryOf(task, prompt.id)?.dispatchedAt === undefined,
    );
    const events: TaskEvent[] = [];
    try {
      for (const prompt of unread) {
        const target = { namespace: this.options.namespace, task: this.options.taskId, promptId: prompt.id };
        events.push(
          ...(await readArchivedEvents(store, this.options.logger, { ...target, after: this.cursor })),
        );
      }
    } catch (err) {
      this.options.logger.warn({ err, task: this.options.taskId }, 'reading archived events failed');
      return; // the runner, when it is up, serves them too
    }
    events.sort((a, b) => a.seq - b.seq);
    for (const event of events) {
      if (this.signal.aborted) return;
      if (!complete && event.seq !== this.cursor + 1) return;
      await this.forward(event);
    }
  }

  /** The highest `lastSeq` the operator recorded among the considered prompts (-1 for none). */
  private highestLastSeq(task: Task): number {
    return Math.max(
      -1,
      ...this.considered(task).map((prompt) => promptEntryOf(task, prompt.id)?.lastSeq ?? -1),
    );
  }

  private doneDue(task: Task): boolean {
    return (
      allPromptsRecordedTerminal(task, this.options.promptId) && this.cursor >= this.highestLastSeq(task)
    );
  }

  private async sendDone(task: Task): Promise<void> {
    const last = this.considered(task).at(-1);
    const finalResult = last === undefined ? undefined : promptEntryOf(task, last.id)?.finalResult;
    const data = {
      status: clientTaskStatus(task),
      lastSeq: this.highestLastSeq(task),
      finalResult: finalResult ?? null,
    };
    await this.write(`event: done\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /**
   * Forwards the runner's live stream from the cursor. Ends with `recheck` when `done` may be due
   * (after an event, or when the operator changed the task) or the client left, and with `retry`
   * when the runner's stream ended or failed (it is down, or has not heard of the task yet).
   */
  private async follow(runner: RunnerClient): Promise<FollowOutcome> {
    const inner = new AbortController();
    const stop = (): void => {
      inner.abort();
    };
    this.signal.addEventListener('abort', stop, { once: true });
    const unsubscribe = this.options.readModel.onTaskChange(
      this.options.namespace,
      this.options.taskId,
      () => {
        const task = this.options.current();
        if (task === undefined || this.doneDue(task)) inner.abort();
      },
    );
    try {
      const batches = runner.streamEventFrames(this.options.taskId, {
        after: this.cursor,
        promptId: this.options.promptId,
        signal: inner.signal,
      });
      for await (const frames of batches) {
        if (!(await this.relay(frames))) continue;
        const task = this.options.current();
        if (task === undefined || this.doneDue(task)) return 'recheck';
      }
      return inner.signal.aborted ? 'recheck' : 'retry';
    } catch (err) {
      if (inner.signal.aborted) return 'recheck';
      this.options.logger.debug({ err, task: this.options.taskId }, 'runner event stream failed; retrying');
      return 'retry';
    } finally {
      unsubscribe();
      inner.abort();
      this.signal.removeEventListener('abort', stop);
    }
  }

  /** Whether `event` is the client's to get now: never one it has (exactly once across reconnects). */
  private takes(event: TaskEvent): boolean {
    if (event.seq <= this.cursor) return false;
    if (this.options.promptId !== undefined && event.promptId !== this.options.promptId) return false;
    this.cursor = event.seq;
    return true;
  }

  /** Sends one event unless the client has it already. */
  private async forward(event: TaskEvent): Promise<boolean> {
    if (!this.takes(event)) return false;
    await this.write(eventFrame(event));
    return true;
  }

  /**
   * Sends on the runner's frames of one read (checked, not serialized again) that the client has
   * not had, as one write: one syscall and one wake-up of the client per batch, not per event.
   */
  private async relay(frames: readonly EventFrame[]): Promise<boolean> {
    const received = traceNow();
    let text = '';
    for (const { event, frame } of frames) {
      markEvent('apiReceived', this.options.taskId, event.seq, received);
      if (!this.takes(event)) continue;
      markEvent('apiSent', this.options.taskId, event.seq);
      text += frame;
    }
    if (text === '') return false;
    await this.write(text);
    return true;
  }

  /** Writes, then waits while the client's socket buffer is full (a slow reader slows the proxy, never our memory). */
  private write(text: string): Promise<void> {
    if (this.signal.aborted || this.res.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        this.res.off('drain', finish);
        this.signal.removeEventListener('abort', finish);
        resolve();
      };
      this.res.once('drain', finish);
      this.signal.addEventListener('abort', finish, { once: true });
    });
  }

  /** Resolves after `ms`, or earlier when the task (or the given workspace) changes or the client leaves. */
  private waitForChange(workspace: string | undefined, ms: number): Promise<void> {
    const { readModel, namespace, taskId } = this.options;
    return new Promise((resolve) => {
      const unsubscribers: (() => void)[] = [];
      const finish = (): void => {
        clearTimeout(timer);
        for (const unsubscribe of unsubscribers) unsubscribe();
        this.signal.removeEventListener('abort', finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      if (workspace !== undefined) {
        unsubscribers.push(readModel.onTaskChange(namespace, taskId, finish));
        unsubscribers.push(readModel.onWorkspaceChange(namespace, workspace, finish));
      }
      this.signal.addEventListener('abort', finish, { once: true });
    });
  }
}
