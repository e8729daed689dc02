import { setTimeout as sleep } from 'node:timers/promises';
import { Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { CONTEXT_LAKE_NAME } from '../../crds/context-lake/types.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import { settleWithin } from '../../platform/deadline.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../../platform/lake-protocol.js';
import type { SqlResult } from '../../platform/lake-protocol.js';
import type { Logger } from '../../platform/log.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { withoutEnginePaths } from '../server-paths.js';
import { cachedLake, setOperatingMode } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import { lakeFailure, lakeIsReady } from './present.js';
import type { ReadyLake } from './present.js';
import { untilObserved } from '../until-observed.js';

/** docs/api.md#limits: the whole call, cold start included. */
export const SQL_TIMEOUT_MS = 180_000;
/** After the lake could not be reached: a breath for the operator to notice before asking again. */
const UNREACHABLE_PAUSE_MS = 1_000;
/** Tries of one query against a lake that could not be reached (it may have restarted under us). */
const UNREACHABLE_ATTEMPTS = 2;

export interface LakeSqlDeps extends LakeStoreDeps {
  installationKey: InstallationKey;
  metrics: Registry;
  logger: Logger;
  /** Bound of one call, wait and query together (tests shorten it). */
  timeoutMs?: number;
  /** The largest answer, in bytes of its rows as JSON (the lake refuses larger ones). */
  maxResultBytes?: number;
}

/** Where a call was when it ended: the log line of a call that took too long says it. */
type Phase = 'waking' | 'waiting for the lake' | 'querying';

type Outcome = 'ok' | 'sql_error' | 'timeout' | 'unavailable' | 'failed';
const METRIC = 'agentry_lake_sql_duration_seconds';

/** One histogram per registry (an app made twice on one registry shares it). */
function sqlDuration(registry: Registry): Histogram<'outcome'> {
  const existing = registry.getSingleMetric(METRIC);
  if (existing instanceof Histogram) return existing;
  return new Histogram({
    name: METRIC,
    help: 'POST /v1/context-lake/sql duration, waiting for the lake included, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 180],
    registers: [registry],
  });
}

const timedOut = (): ApiError =>
  new ApiError(
    'timeout',
    'The query did not complete within the time limit (the lake may still be starting)',
  );

/** A lake in `error` cannot answer until someone changes something: say so at once, not after the wait. */
const failed = (reason: string): ApiError =>
  new ApiError(
    'service_unavailable',
    `The context lake is in error: ${reason}. Fix it, then POST /v1/context-lake/redeploy`,
  );

const stoppedMeanwhile = (): ApiError =>
  new ApiError('conflict', 'The context lake was stopped while the query waited for it to start');

const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;

function outcomeOf(err: unknown): Outcome {
  if (!(err instanceof ApiError)) return 'failed';
  if (err.code === 'sql_error' || err.code === 'payload_too_large') return 'sql_error';
  if (err.code === 'timeout') return 'timeout';
  return err.code === 'service_unavailable' ? 'unavailable' : 'failed';
}

/**
 * POST /sql: wakes a paused or missing lake, waits (on the read model's change events, never by
 * polling the store) until it is Ready for its current generation, and proxies the query; all of
 * it within one deadline. A lake in `error` for its current generation fails the call at once.
 */
export class LakeSql {
  private readonly duration: Histogram<'outcome'>;
  private readonly timeoutMs: number;
  private readonly maxResultBytes: number;

  constructor(private readonly deps: LakeSqlDeps) {
    this.duration = sqlDuration(deps.metrics);
    this.timeoutMs = deps.timeoutMs ?? SQL_TIMEOUT_MS;
    this.maxResultBytes = deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  }

  async run(principal: Principal, query: string, cancel: AbortSignal): Promise<SqlResult> {
    const started = performance.now();
    // A plain timer, held by the event loop: on Node 20 an AbortSignal.timeout (and an
    // AbortSignal.any over one) that only the waiting call refers to may be garbage-collected and
    // never fire — the call then hung past its bound (found by the OpenAPI fuzzer).
    const clock = new AbortController();
    const bound = { reached: false };
    const timer = setTimeout(() => {
      bound.reached = true;
      clock.abort();
    }, this.timeoutMs);
    const onCancel = (): void => {
      clock.abort();
    };
    cancel.addEventListener('abort', onCancel, { once: true });
    const deadline = clock.signal;
    const call = { phase: 'waking' as Phase };
    try {
      // Every step ends at the deadline, answered or not, whatever it awaits.
      const result = await settleWithin(this.query(principal, query, deadline, call), deadline, timedOut);
      this.duration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      return { ...result, elapsedMs: Math.round(performance.now() - started) };
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      this.duration.observe({ outcome: outcomeOf(err) }, seconds);
      if (bound.reached)
        this.deps.logger.warn(
          { namespace: principal.namespace, phase: call.phase, ms: Math.round(seconds * 1000) },
          'a context lake query ran out of time',
        );
      throw err;
    } finally {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    }
  }

  private async query(
    principal: Principal,
    query: string,
    deadline: AbortSignal,
    call: { phase: Phase },
  ): Promise<SqlResult> {
    await this.wake(principal, deadline);
    for (let attempt = 1; ; attempt++) {
      call.phase = 'waiting for the lake';
      const lake = await this.ready(principal, deadline);
      call.phase = 'querying';
      try {
        return await this.send(lake, query, deadline);
      } catch (err) {
        const unreachable = err instanceof LakeRequestError && err.unreachable;
        if (!unreachable || attempt >= UNREACHABLE_ATTEMPTS || deadline.aborted)
          throw this.mapped(err, deadline, query);
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
    await settleWithin(setOperatingMode(this.deps, principal, 'Running'), deadline, timedOut);
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
      timedOut,
    );
  }

  private send(lake: ReadyLake, query: string, deadline: AbortSignal): Promise<SqlResult> {
    const client = new LakeClient({
      endpoint: lake.status.endpoint,
      token: this.deps.installationKey.runnerToken(lake),
    });
    return client.sql({ query, maxResultBytes: this.maxResultBytes }, deadline);
  }

  /** The lake's answers in the data-context API's codes; the engine's message is the client's own query's. */
  private mapped(err: unknown, deadline: AbortSignal, query: string): unknown {
    if (deadline.aborted) return timedOut();
    if (!(err instanceof LakeRequestError)) return err;
    if (err.code === 'sql_error' || err.code === 'bad_request')
      return new ApiError('sql_error', withoutEnginePaths(err.message, query));
    if (err.code === 'result_too_large')
      return new ApiError(
        'payload_too_large',
        `The query's answer is larger than the limit of ${formatBytes(this.maxResultBytes)} ` +
          '(AGENTRY_LAKE_MAX_RESULT_BYTES): select fewer rows or columns',
      );
    if (err.code === 'timeout')
      return new ApiError('timeout', 'The query exceeded the lake server’s time limit');
    if (err.code === 'unexpected_answer') {
      this.deps.logger.error({ err }, 'the lake server answered the query with something unreadable');
      return new ApiError('internal_error', 'The context lake’s answer could not be read', undefined, {
        cause: err,
      });
    }
    this.deps.logger.warn({ err }, 'the lake server did not answer the query');
    return new ApiError('service_unavailable', 'The context lake is not available; try again', undefined, {
      cause: err,
    });
  }
}
