import { Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { LakeRequestError } from '../../platform/lake-client.js';
import { DEFAULT_MAX_RESULT_BYTES, DEFAULT_WAIT_FOR_MS } from '../../platform/lake-protocol.js';
import type { SqlResult } from '../../platform/lake-protocol.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { withoutEnginePaths } from '../server-paths.js';
import { LakeCall, lakeFailureOf, lakeTimedOut } from './lake-call.js';
import type { LakeCallDeps } from './lake-call.js';
import type { SqlBody } from './schemas.js';

/** docs/api.md#limits: the whole call, cold start included (a `waitFor` wait comes on top). */
export const SQL_TIMEOUT_MS = 180_000;

export interface LakeSqlDeps extends LakeCallDeps {
  metrics: Registry;
  /** Bound of one call, wait and query together (tests shorten it). */
  timeoutMs?: number;
  /** The largest answer, in bytes of its rows as JSON (the lake refuses larger ones). */
  maxResultBytes?: number;
}

type Outcome = 'ok' | 'sql_error' | 'timeout' | 'not_applied' | 'busy' | 'unavailable' | 'failed';
const METRIC = 'agentry_lake_sql_duration_seconds';

/** One histogram per registry (an app made twice on one registry shares it). */
function sqlDuration(registry: Registry): Histogram<'outcome'> {
  const existing = registry.getSingleMetric(METRIC);
  if (existing instanceof Histogram) return existing;
  return new Histogram({
    name: METRIC,
    help: 'POST /v1/context-lake/sql duration, waiting for the lake included, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 180, 240],
    registers: [registry],
  });
}

const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;

function outcomeOf(err: unknown): Outcome {
  if (!(err instanceof ApiError)) return 'failed';
  if (err.code === 'sql_error' || err.code === 'payload_too_large') return 'sql_error';
  if (err.code === 'timeout' || err.code === 'not_applied' || err.code === 'busy') return err.code;
  return err.code === 'service_unavailable' ? 'unavailable' : 'failed';
}

/**
 * POST /sql: the query (with its `waitFor` objects, if any) sent to the lake once it is Ready
 * (lake-call.ts), within one deadline that covers the wait for those objects too.
 */
export class LakeSql {
  private readonly duration: Histogram<'outcome'>;
  private readonly timeoutMs: number;
  private readonly maxResultBytes: number;
  private readonly lakeCall: LakeCall;

  constructor(private readonly deps: LakeSqlDeps) {
    this.duration = sqlDuration(deps.metrics);
    this.timeoutMs = deps.timeoutMs ?? SQL_TIMEOUT_MS;
    this.maxResultBytes = deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.lakeCall = new LakeCall(deps);
  }

  async run(principal: Principal, body: SqlBody, cancel: AbortSignal): Promise<SqlResult> {
    const started = performance.now();
    // The lake waits for `waitFor` objects before it runs the query: the call's bound grows by it.
    const waitMs = body.waitFor === undefined ? 0 : (body.waitTimeoutMs ?? DEFAULT_WAIT_FOR_MS);
    try {
      const result = await this.lakeCall.run(principal, {
        timeoutMs: this.timeoutMs + waitMs,
        cancel,
        what: 'query',
        send: async (client, deadline) => {
          try {
            return await client.sql({ ...body, maxResultBytes: this.maxResultBytes }, deadline);
          } catch (err) {
            throw this.mapped(err, deadline, body.query);
          }
        },
      });
      this.duration.observe({ outcome: 'ok' }, (performance.now() - started) / 1000);
      return { ...result, elapsedMs: Math.round(performance.now() - started) };
    } catch (err) {
      this.duration.observe({ outcome: outcomeOf(err) }, (performance.now() - started) / 1000);
      throw err;
    }
  }

  /**
   * The lake's answers in the data-context API's codes; the engine's message is the client's own
   * query's. Errors the lake call retries (unreachable) stay LakeRequestErrors.
   */
  private mapped(err: unknown, deadline: AbortSignal, query: string): Error {
    if (deadline.aborted) return lakeTimedOut();
    if (!(err instanceof LakeRequestError)) return err instanceof Error ? err : new Error(String(err));
    if (err.unreachable) return err;
    if (err.code === 'sql_error') return new ApiError('sql_error', withoutEnginePaths(err.message, query));
    // The request's part only the lake can check (a waitFor object no dataset holds, an ambiguous bucket).
    if (err.code === 'bad_request')
      return new ApiError('validation_error', withoutEnginePaths(err.message, query));
    if (err.code === 'result_too_large')
      return new ApiError(
        'payload_too_large',
        `The query's answer is larger than the limit of ${formatBytes(this.maxResultBytes)} ` +
          '(AGENTRY_LAKE_MAX_RESULT_BYTES): select fewer rows or columns',
      );
    if (err.code === 'timeout')
      return new ApiError('timeout', 'The query exceeded the lake server’s time limit');
    if (err.code === 'not_applied')
      return new ApiError('not_applied', withoutEnginePaths(err.message, query));
    return lakeFailureOf(err, this.deps.logger);
  }
}
