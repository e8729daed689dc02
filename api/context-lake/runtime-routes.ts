import type { Response } from 'express';
import type { ContextLake } from '../../crds/context-lake/types.js';
import type { Principal } from '../auth/principal.js';
import { defineRoute } from '../route.js';
import type { RouteDefinition } from '../route.js';
import { LAKE_PREFIX, LAKE_TAG } from './config-routes.js';
import { cachedLake, changeLakeSpec, configOf, setOperatingMode } from './lake-resource.js';
import type { LakeStoreDeps } from './lake-resource.js';
import { presentStatus, requestedModeOf, vmStatusOf } from './present.js';
import type { LakeRefresh } from './refresh.js';
import {
  LakeStatusResponseSchema,
  NameParamsSchema,
  RefreshBodySchema,
  RefreshResponseSchema,
  SqlBodySchema,
  SqlResponseSchema,
  VmActionResponseSchema,
} from './schemas.js';
import type { LakeSql } from './sql.js';

export interface LakeRuntimeRoutesDeps extends LakeStoreDeps {
  sql: LakeSql;
  refresh: LakeRefresh;
  now: () => Date;
}

type VmAction = (deps: LakeRuntimeRoutesDeps, principal: Principal) => Promise<ContextLake | undefined>;

/** POST /start, /stop, /redeploy: the intent is written, the operator converges (202). */
function vmActionRoute(
  deps: LakeRuntimeRoutesDeps,
  action: 'start' | 'stop' | 'redeploy',
  summary: string,
  apply: VmAction,
): RouteDefinition {
  return defineRoute({
    method: 'post',
    path: `${LAKE_PREFIX}/${action}`,
    operationId: `${action}ContextLake`,
    summary,
    tag: LAKE_TAG,
    scope: 'context-lake:admin',
    responses: {
      202: {
        description:
          'Accepted: the VM status now and the requested mode it follows (GET /status shows the change)',
        schema: VmActionResponseSchema,
      },
    },
    handler: async ({ principal }) => {
      const lake = (await apply(deps, principal)) ?? cachedLake(deps.readModel, principal);
      return {
        status: 202,
        body: { ok: true, vmStatus: vmStatusOf(lake), requestedMode: requestedModeOf(lake) },
      };
    },
  });
}

/** A redeploy restarts the lake server with its configuration; a lake that does not exist has nothing to redeploy. */
const redeploy: VmAction = (deps, principal) =>
  changeLakeSpec(deps, principal, (spec) => ({ ...spec, restartedAt: deps.now().toISOString() }));

/** Aborts when the client goes away before its answer: waiting on for it would be for nothing. */
function whileConnected<T>(res: Response, work: (gone: AbortSignal) => Promise<T>): Promise<T> {
  const gone = new AbortController();
  const onClose = (): void => {
    if (!res.writableEnded) gone.abort();
  };
  res.on('close', onClose);
  return work(gone.signal).finally(() => {
    res.off('close', onClose);
  });
}

function refreshRoute(deps: LakeRuntimeRoutesDeps): RouteDefinition {
  return defineRoute({
    method: 'post',
    path: `${LAKE_PREFIX}/datasets/:name/refresh`,
    operationId: 'refreshContextLakeDataset',
    summary:
      'Refresh a dataset from its source now (auto: only changed objects; full: everything); a paused lake is started first',
    tag: LAKE_TAG,
    scope: 'context-lake:write',
    params: NameParamsSchema,
    body: RefreshBodySchema,
    responses: {
      202: {
        description:
          'Accepted by the lake: the refresh runs in the background (GET /status shows lastRefresh)',
        schema: RefreshResponseSchema,
      },
    },
    handler: async ({ params, body, principal, res }) => ({
      status: 202,
      body: await whileConnected(res, (gone) =>
        deps.refresh.run(principal, params.name, body.mode ?? 'auto', gone),
      ),
    }),
  });
}

function sqlRoute(deps: LakeRuntimeRoutesDeps): RouteDefinition {
  return defineRoute({
    method: 'post',
    path: `${LAKE_PREFIX}/sql`,
    operationId: 'queryContextLake',
    summary:
      'Run a SQL query, optionally after the objects in waitFor were applied; a paused or missing lake is started and the call waits for it (3 minutes at most in all, plus the waitFor wait, then 504)',
    tag: LAKE_TAG,
    scope: 'context-lake:sql',
    promptToken: true,
    body: SqlBodySchema,
    responses: { 200: { description: 'The result', schema: SqlResponseSchema } },
    handler: async ({ body, principal, res }) => ({
      status: 200,
      body: await whileConnected(res, (gone) => deps.sql.run(principal, body, gone)),
    }),
  });
}

/** GET /status, the VM actions and SQL (docs/api.md#context-lake). */
export const lakeRuntimeRoutes = (deps: LakeRuntimeRoutesDeps): RouteDefinition[] => [
  defineRoute({
    method: 'get',
    path: `${LAKE_PREFIX}/status`,
    operationId: 'getContextLakeStatus',
    summary: 'The VM status and each dataset’s status (unknown while the lake is paused)',
    tag: LAKE_TAG,
    scope: 'context-lake:read',
    promptToken: true,
    responses: { 200: { description: 'The status', schema: LakeStatusResponseSchema } },
    handler: ({ principal }) => {
      const lake = cachedLake(deps.readModel, principal);
      return { status: 200, body: presentStatus(lake, configOf(principal, lake)) };
    },
  }),
  vmActionRoute(deps, 'start', 'Start the lake, provisioning it when needed', (d, p) =>
    setOperatingMode(d, p, 'Running'),
  ),
  vmActionRoute(deps, 'stop', 'Hibernate the lake (its configuration is kept)', (d, p) =>
    setOperatingMode(d, p, 'Hibernated'),
  ),
  vmActionRoute(deps, 'redeploy', 'Restart the lake server with its current configuration', redeploy),
  sqlRoute(deps),
  refreshRoute(deps),
];
