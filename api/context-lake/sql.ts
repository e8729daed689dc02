import { setTimeout as sleep } from 'node:timers/promises';
import { Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { CONTEXT_LAKE_NAME } from '../../crds/context-lake.js';
import type { InstallationKey } from '../../platform/installation-key.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import type { SqlResult } from '../../platform/lake-protocol.js';
import type { Logger } from '../../platform/log.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { cachedLake, setOperatingMode } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import { lakeFailure, lakeIsReady } from './present.js';
import type { ReadyLake } from './present.js';

/** CONTRACT.md §8: the whole call, cold start included. */
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
}

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

function outcomeOf(err: unknown): Outcome {
  if (!(err instanceof ApiError)) return 'failed';
  if (err.code === 'sql_error') return 'sql_error';
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

  constructor(private readonly deps: LakeSqlDeps) {
    this.duration = sqlDuration(deps.metrics);
    this.timeoutMs = deps.timeoutMs ?? SQL_TIMEOUT_MS;
  }

  async run(principal: Principal, query: string, cancel: AbortSignal): Promise<SqlResult> {
    const started = performance.now();
    const deadline = AbortSignal.any([AbortSignal.timeout(this.timeoutMs), cancel]);
    try {
      const result = await this.query(principal, query, deadline);
      this.duration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      return { ...result, elapsedMs: Math.round(performance.now() - started) };
    } catch (err) {
      this.duration.observe({ outcome: outcomeOf(err) }, (performance.now() - started) / 1000);
      throw err;
    }
  }

  private async query(principal: Principal, query: string, deadline: AbortSignal): Promise<SqlResult> {
    await this.wake(principal);
    for (let attempt = 1; ; attempt++) {
      const lake = await this.ready(principal, deadline);
      try {
        return await this.send(lake, query, deadline);
      } catch (err) {
        const unreachable = err instanceof LakeRequestError && err.unreachable;
        if (!unreachable || attempt >= UNREACHABLE_ATTEMPTS || deadline.aborted)
          throw this.mapped(err, deadline);
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
  private async wake(principal: Principal): Promise<void> {
    const lake = cachedLake(this.deps.readModel, principal);
    if (lake?.spec.operatingMode === 'Running') return;
    await setOperatingMode(this.deps, principal, 'Running');
  }

  /** Resolves with the lake once it serves its current configuration; rejects at the deadline. */
  private ready(principal: Principal, deadline: AbortSignal): Promise<ReadyLake> {
    const { readModel } = this.deps;
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const lake = cachedLake(readModel, principal);
        const failure = lakeFailure(lake);
        if (failure !== undefined) {
          finish();
          reject(failed(failure));
          return true;
        }
        if (!lakeIsReady(lake)) return false;
        finish();
        resolve(lake);
        return true;
      };
      const onDeadline = (): void => {
        finish();
        reject(timedOut());
      };
      // Listening before the first look, so that no change slips between the two.
      const unsubscribe = readModel.onContextLakeChange(principal.namespace, CONTEXT_LAKE_NAME, check);
      const finish = (): void => {
        unsubscribe();
        deadline.removeEventListener('abort', onDeadline);
      };
      deadline.addEventListener('abort', onDeadline);
      if (!check() && deadline.aborted) onDeadline();
    });
  }

  private send(lake: ReadyLake, query: string, deadline: AbortSignal): Promise<SqlResult> {
    const client = new LakeClient({
      endpoint: lake.status.endpoint,
      token: this.deps.installationKey.runnerToken(lake),
    });
    return client.sql({ query }, deadline);
  }

  /** The lake's answers in the data-context API's codes; the engine's message is the client's own query's. */
  private mapped(err: unknown, deadline: AbortSignal): unknown {
    if (deadline.aborted) return timedOut();
    if (!(err instanceof LakeRequestError)) return err;
    if (err.code === 'sql_error' || err.code === 'bad_request') return new ApiError('sql_error', err.message);
    if (err.code === 'timeout')
      return new ApiError('timeout', 'The query exceeded the lake server’s time limit');
    this.deps.logger.warn({ err }, 'the lake server did not answer the query');
    return new ApiError('service_unavailable', 'The context lake is not available; try again', undefined, {
      cause: err,
    });
  }
}
