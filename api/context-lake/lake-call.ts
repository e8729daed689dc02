import { setTimeout as sleep } from 'node:timers/promises';
import { CONTEXT_LAKE_NAME } from '../../crds/context-lake/types.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import { settleWithin } from '../../platform/deadline.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import type { Logger } from '../../platform/log.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { untilObserved } from '../until-observed.js';
import { cachedLake, setOperatingMode } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import { lakeFailure, lakeIsReady } from './present.js';
import type { ReadyLake } from './present.js';

/** After the lake could not be reached: a breath for the operator to notice before asking again. */
const UNREACHABLE_PAUSE_MS = 1_000;
/** Tries of one request against a lake that could not be reached (it may have restarted under us). */
const UNREACHABLE_ATTEMPTS = 2;

export interface LakeCallDeps extends LakeStoreDeps {
  installationKey: InstallationKey;
  logger: Logger;
}

/** Where a call was when it ended: the log line of a call that took too long says it. */
type Phase = 'waking' | 'waiting for the lake' | 'asking the lake';

export interface LakeCallOptions<T> {
  /** Bound of the whole call: waking, waiting for Ready and the request. */
  timeoutMs: number;
  /** The client went away: stop waiting. */
  cancel: AbortSignal;
  /** What to ask of the lake once it is Ready; `deadline` aborts at the call's bound. */
  send: (client: LakeClient, deadline: AbortSignal) => Promise<T>;
  /** For the log line of a call that ran out of time. */
  what: string;
}

export const lakeTimedOut = (): ApiError =>
  new ApiError(
    'timeout',
    'The request did not complete within the time limit (the lake may still be starting)',
  );

/** A lake in `error` cannot answer until someone changes something: say so at once, not after the wait. */
const failed = (reason: string): ApiError =>
  new ApiError(
    'service_unavailable',
    `The context lake is in error: ${reason}. Fix it, then POST /v1/context-lake/redeploy`,
  );

const stoppedMeanwhile = (): ApiError =>
  new ApiError('conflict', 'The context lake was stopped while the request waited for it to start');

/**
 * A call that needs the lake server (SQL, refresh): wakes a paused or missing lake, waits (on the
 * read model's change events, never by polling the store) until it is Ready for its current
 * generation, and sends the request; all of it within one deadline. A lake in `error` for its
 * current generation fails the call at once. Rejects with an ApiError: `send` maps the lake's
 * answers that are its own (the query's errors), lakeFailureOf the rest.
 */
export class LakeCall {
  constructor(private readonly deps: LakeCallDeps) {}

  async run<T>(principal: Principal, options: LakeCallOptions<T>): Promise<T> {
    const started = performance.now();
    // A plain timer, held by the event loop: on Node 20 an AbortSignal.timeout (and an
    // AbortSignal.any over one) that only the waiting call refers to may be garbage-collected and
    // never fire — the call then hung past its bound (found by the OpenAPI fuzzer).
    const clock = new AbortController();
    const bound = { reached: false };
    const timer = setTimeout(() => {
      bound.reached = true;
      clock.abort();
    }, options.timeoutMs);
    const onCancel = (): void => {
      clock.abort();
    };
    options.cancel.addEventListener('abort', onCancel, { once: true });
    const call = { phase: 'waking' as Phase };
    try {
      // Every step ends at the deadline, answered or not, whatever it awaits.
      return await settleWithin(
        this.steps(principal, options, clock.signal, call),
        clock.signal,
        lakeTimedOut,
      );
    } catch (err) {
      if (bound.reached)
        this.deps.logger.warn(
          {
            namespace: principal.namespace,
            phase: call.phase,
            what: options.what,
            ms: Math.round(performance.now() - started),
          },
          'a context lake request ran out of time',
        );
      throw err instanceof LakeRequestError ? lakeFailureOf(err, this.deps.logger) : err;
    } finally {
      clearTimeout(timer);
      options.cancel.removeEventListener('abort', onCancel);
    }
  }

  private async steps<T>(
    principal: Principal,
    options: LakeCallOptions<T>,
    deadline: AbortSignal,
    call: { phase: Phase },
  ): Promise<T> {
    await this.wake(principal, deadline);
    for (let attempt = 1; ; attempt++) {
      call.phase = 'waiting for the lake';
      const lake = await this.ready(principal, deadline);
      call.phase = 'asking the lake';
      try {
        return await options.send(this.clientOf(lake), deadline);
      } catch (err) {
        const unreachable = err instanceof LakeRequestError && err.unreachable;
        if (!unreachable || attempt >= UNREACHABLE_ATTEMPTS || deadline.aborted) throw err;
        this.deps.logger.warn(
          { err, namespace: principal.namespace },
          'the lake server could not be reached; waiting once more',
        );
      }
      // Once more: the lake may have restarted under us; the operator marks it Ready again.
      await sleep(UNREACHABLE_PAUSE_MS, undefined, { signal: deadline }).catch(() => undefined);
    }
  }

  /** A paused or missing lake is asked to run; the operator provisions or resumes it. */
  private async wake(principal: Principal, deadline: AbortSignal): Promise<void> {
    const lake = cachedLake(this.deps.readModel, principal);
    if (lake?.spec.operatingMode === 'Running') return;
    // The store's retries are bounded too, but the call's deadline is the one the client sees.
    await settleWithin(setOperatingMode(this.deps, principal, 'Running'), deadline, lakeTimedOut);
  }

  /**
   * Resolves with the lake once it serves its current configuration; rejects at the deadline, and
   * at once when the lake is stopped (or deleted) meanwhile, or in error: it would not start or
   * recover by itself.
   */
  private ready(principal: Principal, deadline: AbortSignal): Promise<ReadyLake> {
    const { readModel } = this.deps;
    return untilObserved<ReadyLake>(
      (onChange) => readModel.onContextLakeChange(principal.namespace, CONTEXT_LAKE_NAME, onChange),
      () => {
        const lake = cachedLake(readModel, principal);
        if (lake?.spec.operatingMode !== 'Running') return { error: stoppedMeanwhile() };
        const failure = lakeFailure(lake);
        if (failure !== undefined) return { error: failed(failure) };
        return lakeIsReady(lake) ? { value: lake } : undefined;
      },
      deadline,
      lakeTimedOut,
    );
  }

  private clientOf(lake: ReadyLake): LakeClient {
    return new LakeClient({
      endpoint: lake.status.endpoint,
      token: this.deps.installationKey.runnerToken(lake),
    });
  }
}

/**
 * The lake's answers every call maps alike, once the caller has mapped its own (the query's
 * errors): too busy, unreadable, and anything else as unavailable (unreachable, not loaded).
 */
export function lakeFailureOf(err: LakeRequestError, logger: Logger): ApiError {
  if (err.code === 'busy')
    return new ApiError(
      'busy',
      'The context lake is running as many queries as it allows and its queue is full; retry in a moment',
    );
  if (err.code === 'unexpected_answer') {
    logger.error({ err }, 'the lake server answered with something unreadable');
    return new ApiError('internal_error', 'The context lake’s answer could not be read', undefined, {
      cause: err,
    });
  }
  logger.warn({ err }, 'the lake server did not answer the request');
  return new ApiError('service_unavailable', 'The context lake is not available; try again', undefined, {
    cause: err,
  });
}
