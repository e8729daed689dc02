import type { EventType, ExecutorInvocation } from '../../platform/runner-protocol.js';

/** An event as an executor produces it; the event log adds seq, timestamp and promptId. */
export interface ExecutorEvent {
  eventType: Exclude<EventType, 'status'>;
  payload: Record<string, unknown>;
}

/** How a run ended. `finalResult` is the answer the `result` event carried (if any). */
export type ExecutorOutcome =
  | { status: 'succeeded'; finalResult: string }
  | { status: 'failed'; error: string; finalResult?: string }
  | { status: 'canceled' };

export interface ExecutorRun {
  invocation: ExecutorInvocation;
  prompt: string;
  /** The working directory (`/code`). */
  cwd: string;
  /** The working directory as events name it: `/code` also where `cwd` is a host directory. */
  shownCwd?: string;
  /** A private directory for this prompt (the prompt file of `promptVia: file` goes here). */
  scratchDir: string;
  /** Aborting kills the executor's whole process group (SIGTERM, then SIGKILL after a grace period). */
  signal: AbortSignal;
  /**
   * Called for each normalized event, in order. Calls overlap: an output chunk's events are handed
   * over together (the event log makes them durable in one batch) and awaited before the next chunk
   * is read, so a slow disk slows the executor rather than losing events.
   */
  onEvent(event: ExecutorEvent): Promise<void>;
  /**
   * What the model gateway counted for the prompt, asked once the executor ended: the `result`
   * event carries it as `metered`. Unset: no gateway (nothing is asked).
   */
  meteredUsage?: () => Promise<Record<string, unknown> | undefined>;
}

/**
 * Runs one prompt with one executor and resolves when it and every process it started are gone.
 * Never rejects for executor failures (a missing binary, a non-zero exit, a timeout): those are a
 * `failed` outcome with an `error` event already emitted. `canceled` only when `signal` aborted.
 */
export type RunExecutor = (run: ExecutorRun) => Promise<ExecutorOutcome>;
