import type { RefreshMode } from '../../platform/lake-protocol.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors.js';
import { LakeCall } from './lake-call.js';
import type { LakeCallDeps } from './lake-call.js';
import { cachedLake, configOf } from './lake-resource.js';
import { SQL_TIMEOUT_MS } from './sql.js';

export interface LakeRefreshDeps extends LakeCallDeps {
  /** Bound of one call, cold start included (the SQL call's; tests shorten it). */
  timeoutMs?: number;
}

/**
 * POST /datasets/:name/refresh (docs/api.md#context-lake): the lake is woken like for a query, and
 * once Ready asked to refresh the dataset; 202 when it accepted. Waking rather than leaving a
 * paused lake be: a refresh asked of a lake is work the caller wants done now, and a `full` one
 * would otherwise be lost (a wake only checks sources by ETag).
 */
export class LakeRefresh {
  private readonly lakeCall: LakeCall;
  private readonly timeoutMs: number;

  constructor(private readonly deps: LakeRefreshDeps) {
    this.lakeCall = new LakeCall(deps);
    this.timeoutMs = deps.timeoutMs ?? SQL_TIMEOUT_MS;
  }

  async run(
    principal: Principal,
    dataset: string,
    mode: RefreshMode,
    cancel: AbortSignal,
  ): Promise<{ ok: true; accepted: string[]; mode: RefreshMode }> {
    if (!this.configured(principal, dataset)) throw ApiError.notFound(`Dataset ${dataset}`);
    const accepted = await this.lakeCall.run(principal, {
      timeoutMs: this.timeoutMs,
      cancel,
      what: 'refresh',
      send: (client) => client.refresh([dataset], { mode }),
    });
    return { ok: true, accepted, mode };
  }

  /** Only a dataset of the configuration; checked before anything wakes the lake. */
  private configured(principal: Principal, dataset: string): boolean {
    const lake = cachedLake(this.deps.readModel, principal);
    return configOf(principal, lake).datasets.some((candidate) => candidate.name === dataset);
  }
}
