import type { Logger } from '../platform/log.js';
import { isTerminalPromptStatus } from '../platform/runner-protocol.js';
import type { DispatchPrompt, EventType, PromptState } from '../platform/runner-protocol.js';
import type { TaskEventLog } from './event-log.js';
import type { ExecutorOutcome, RunExecutor } from './executors/types.js';
import type { PromptRecord, PromptRecordStore } from './prompt-records.js';
import { recoverPrompts } from './prompt-recovery.js';
import { executePrompt } from './prompt-run.js';
import type { RunnerState } from './state.js';

export const SHUTDOWN_ERROR = 'the workspace stopped while this prompt ran';

export interface PromptQueueOptions {
  events: TaskEventLog;
  records: PromptRecordStore;
  runExecutor: RunExecutor;
  state: RunnerState;
  workdir: string;
  /** The working directory as events name it. */
  shownWorkdir: string;
  stateDir: string;
  logger: Logger;
  now?: () => Date;
  prepTimeoutMs?: number;
  meteredUsageTimeoutMs?: number | undefined;
}

interface Terminal {
  status: 'succeeded' | 'failed' | 'canceled';
  error?: string;
  finalResult?: string;
}

interface Entry {
  sequence: number;
  state: PromptState;
  /** Dropped once the prompt is terminal: the text and the executor's secrets are not needed again. */
  request: DispatchPrompt | undefined;
  /** Settles when the record of its acceptance is on disk. */
  accepted: Promise<void>;
  /** Resolves when the prompt is terminal and recorded. */
  settled: Promise<void>;
  settle(): void;
  abort?: AbortController;
  cancelRequested: boolean;
}

const keyOf = (taskId: string, promptId: string): string => `${taskId}/${promptId}`;

function newEntry(record: PromptRecord): Entry {
  let settle = (): void => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const terminal = isTerminalPromptStatus(record.state.status);
  if (terminal) settle();
  return {
    sequence: record.sequence,
    state: record.state,
    request: terminal ? undefined : record.request,
    accepted: Promise.resolve(),
    settled,
    settle,
    cancelRequested: false,
  };
}

/**
 * Why a run ended as it did. A `canceled` outcome is the executor obeying our abort signal: a
 * cancel request makes it `canceled`, a shutdown makes it `failed` (nobody asked for it to stop).
 */
function terminalOf(outcome: ExecutorOutcome, entry: Entry, stopping: boolean): Terminal {
  switch (outcome.status) {
    case 'succeeded':
      return { status: 'succeeded', finalResult: outcome.finalResult };
    case 'failed':
      return { status: 'failed', error: outcome.error, finalResult: outcome.finalResult };
    case 'canceled':
      return stopping && !entry.cancelRequested
        ? { status: 'failed', error: SHUTDOWN_ERROR }
        : { status: 'canceled' };
  }
}

/**
 * The runner's one prompt queue: prompts of every task of this workspace run one at a time, in the
 * order they were accepted. State lives in prompt records and the event log, so a restarted runner
 * picks up where it stopped (see recoverPrompts).
 */
export class PromptQueue {
  private readonly entries = new Map<string, Entry>();
  private readonly pending: Entry[] = [];
  private readonly now: () => Date;
  private nextSequence = 0;
  private started = false;
  private stopping = false;
  private current: Entry | undefined;
  private currentRun: Promise<void> = Promise.resolve();

  constructor(private readonly options: PromptQueueOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Recovers the records left on disk, then starts running pending prompts. */
  async start(): Promise<void> {
    const { events, records, logger } = this.options;
    const stateDir = this.options.stateDir;
    for (const record of await recoverPrompts({ stateDir, events, records, logger, now: this.now })) {
      const entry = newEntry(record);
      this.entries.set(keyOf(record.state.taskId, record.state.promptId), entry);
      if (entry.state.status === 'pending') this.pending.push(entry);
      this.nextSequence = Math.max(this.nextSequence, record.sequence + 1);
    }
    this.started = true;
    logger.info({ prompts: this.entries.size, pending: this.pending.length }, 'prompt queue started');
    this.pump();
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  /** Prompts this runner knows of, recovered from disk or dispatched since: 0 for a runner never used. */
  get promptCount(): number {
    return this.entries.size;
  }

  get runningPromptId(): string | undefined {
    return this.current?.state.promptId;
  }

  get(taskId: string, promptId: string): PromptState | undefined {
    const entry = this.entries.get(keyOf(taskId, promptId));
    return entry === undefined ? undefined : { ...entry.state };
  }

  /** Accepts a prompt once: the same ids again answer the known state (`created: false`). */
  async dispatch(
    taskId: string,
    promptId: string,
    request: DispatchPrompt,
  ): Promise<{ created: boolean; state: PromptState }> {
    const key = keyOf(taskId, promptId);
    const known = this.entries.get(key);
    if (known !== undefined) {
      await known.accepted;
      return { created: false, state: { ...known.state } };
    }
    const state: PromptState = {
      taskId,
      promptId,
      status: 'pending',
      acceptedAt: this.now().toISOString(),
      lastSeq: -1,
    };
    const entry = newEntry({ sequence: this.nextSequence++, request, state });
    entry.accepted = this.options.records.write({ sequence: entry.sequence, request, state });
    this.entries.set(key, entry);
    try {
      await entry.accepted;
    } catch (err) {
      this.entries.delete(key);
      throw err;
    }
    if (entry.state.status === 'pending') this.pending.push(entry);
    this.pump();
    return { created: true, state: { ...entry.state } };
  }

  /** Cancels a prompt and resolves with its terminal state; undefined when it was never dispatched. */
  async cancel(taskId: string, promptId: string): Promise<PromptState | undefined> {
    const entry = this.entries.get(keyOf(taskId, promptId));
    if (entry === undefined) return undefined;
    await entry.accepted;
    if (entry.state.status === 'pending') {
      entry.state.status = 'canceled'; // at once, so that the queue never starts it
      const index = this.pending.indexOf(entry);
      if (index >= 0) this.pending.splice(index, 1);
      await this.finish(entry, { status: 'canceled' });
    } else if (entry.state.status === 'running') {
      entry.cancelRequested = true;
      entry.abort?.abort(new Error('the prompt was canceled'));
    }
    await entry.settled;
    return { ...entry.state };
  }

  /**
   * Stops taking prompts from the queue, aborts the running one (recorded `failed` with
   * SHUTDOWN_ERROR) and waits for it; pending prompts stay pending on disk for the next start.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.current?.abort?.abort(new Error('the runner is stopping'));
    await this.currentRun;
  }

  private pump(): void {
    if (!this.started || this.stopping || this.current !== undefined) return;
    const entry = this.pending.shift();
    if (entry === undefined) return;
    this.current = entry;
    entry.abort = new AbortController();
    entry.state.status = 'running';
    entry.state.startedAt = this.now().toISOString();
    this.currentRun = this.run(entry).finally(() => {
      this.current = undefined;
      this.pump();
    });
  }

  /** Runs one prompt to a terminal state. Never rejects: whatever breaks ends the prompt `failed`. */
  private async run(entry: Entry): Promise<void> {
    const { taskId, promptId } = entry.state;
    const endBusy = this.options.state.begin();
    const signal = entry.abort?.signal ?? AbortSignal.abort();
    let terminal: Terminal;
    try {
      // The record says `running` before the log does: a record still `pending` after a crash
      // therefore never has events, and recovery can tell the two apart.
      await this.record(entry);
      await this.append(entry, 'status', { status: 'running' });
      this.options.logger.info({ taskId, promptId }, 'prompt started');
      const request = entry.request;
      if (request === undefined) throw new Error('a running prompt has no request');
      const outcome = await executePrompt(
        this.options,
        { taskId, promptId, request },
        signal,
        (type, payload) => this.append(entry, type, payload),
      );
      terminal = terminalOf(outcome, entry, this.stopping);
    } catch (err) {
      this.options.logger.error({ err, taskId, promptId }, 'a prompt failed in the runner');
      terminal = { status: 'failed', error: 'the runner failed while running this prompt' };
    }
    try {
      if (terminal.error === SHUTDOWN_ERROR) await this.append(entry, 'error', { message: SHUTDOWN_ERROR });
      await this.finish(entry, terminal);
    } finally {
      endBusy();
    }
  }

  private async append(entry: Entry, eventType: EventType, payload: Record<string, unknown>): Promise<void> {
    const event = await this.options.events.append(
      entry.state.taskId,
      entry.state.promptId,
      eventType,
      payload,
    );
    entry.state.lastSeq = event.seq;
  }

  private async record(entry: Entry): Promise<void> {
    if (entry.request === undefined) return;
    await this.options.records.write({
      sequence: entry.sequence,
      request: entry.request,
      state: entry.state,
    });
  }

  /**
   * Appends the terminal status (the prompt's last event) and records it. The in-memory state turns
   * terminal even when the disk refuses, so that callers waiting for it are not stuck.
   */
  private async finish(entry: Entry, terminal: Terminal): Promise<void> {
    const { taskId, promptId } = entry.state;
    try {
      const payload: Record<string, unknown> = { status: terminal.status };
      if (terminal.error !== undefined) payload.error = terminal.error;
      await this.append(entry, 'status', payload);
    } catch (err) {
      this.options.logger.error({ err, taskId, promptId }, 'cannot append the terminal status of a prompt');
    }
    const ended: PromptState = {
      ...entry.state,
      status: terminal.status,
      completedAt: this.now().toISOString(),
      ...(terminal.error === undefined ? {} : { error: terminal.error }),
      ...(terminal.finalResult === undefined ? {} : { finalResult: terminal.finalResult }),
    };
    // On disk first (the record then drops the executor's secrets), shown second: whoever sees the
    // prompt ended finds its record ended too.
    try {
      await this.record({ ...entry, state: ended });
    } catch (err) {
      this.options.logger.error({ err, taskId, promptId }, 'cannot record the end of a prompt');
    }
    Object.assign(entry.state, ended);
    entry.request = undefined;
    entry.settle();
    this.options.logger.info({ taskId, promptId, status: terminal.status }, 'prompt ended');
  }
}
