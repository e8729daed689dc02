import type { Registry } from 'prom-client';
import type { InstallationKey } from '../../platform/installation-key.js';
import type { Connector } from '../../platform/lake-config/dataset-source.js';
import type { NotificationQueues } from '../../platform/lake-notifications/types.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { lakeConfigRoutes } from './config-routes.js';
import { LakeWriter } from './lake-writer.js';
import { lakeRuntimeRoutes } from './runtime-routes.js';
import { LakeRefresh } from './refresh.js';
import { LakeSql } from './sql.js';
import type { ReadModel } from '../read-model.js';
import type { RouteDefinition } from '../route.js';

export { requireProPlan } from './subscription.js';
export { LAKE_PREFIX } from './config-routes.js';

/** The connectors when the installation names none (AGENTRY_LAKE_CONNECTORS' default). */
export const DEFAULT_LAKE_CONNECTORS: ReadonlySet<Connector> = new Set(['s3', 'https']);

export interface ContextLakeRoutesDeps {
  store: ResourceStore;
  readModel: ReadModel;
  logger: Logger;
  metrics: Registry;
  /** Derives the lake server's token, as the operator does for the workload. */
  installationKey: InstallationKey;
  connectors: ReadonlySet<Connector>;
  /** Directories an organization's file:// datasets may read below. */
  fileRootsOf: (namespace: string) => readonly string[];
  /** Undefined: no SQS on this installation, so datasets cannot ask for notifications. */
  queues: NotificationQueues | undefined;
  /** Bound of a POST /sql call, cold start included (default 3 minutes). */
  sqlTimeoutMs: number | undefined;
  /** The largest SQL answer in bytes (default 64 MiB). */
  maxResultBytes: number | undefined;
  now: () => Date;
}

/** The data-context API under /v1/context-lake (docs/api.md#context-lake). */
export function contextLakeRoutes(deps: ContextLakeRoutesDeps): RouteDefinition[] {
  const writer = new LakeWriter({
    store: deps.store,
    readModel: deps.readModel,
    connectors: deps.connectors,
    fileRootsOf: deps.fileRootsOf,
    queues: deps.queues,
    logger: deps.logger,
    now: deps.now,
  });
  const sql = new LakeSql({
    store: deps.store,
    readModel: deps.readModel,
    installationKey: deps.installationKey,
    metrics: deps.metrics,
    logger: deps.logger,
    ...(deps.sqlTimeoutMs === undefined ? {} : { timeoutMs: deps.sqlTimeoutMs }),
    ...(deps.maxResultBytes === undefined ? {} : { maxResultBytes: deps.maxResultBytes }),
  });
  const refresh = new LakeRefresh({
    store: deps.store,
    readModel: deps.readModel,
    installationKey: deps.installationKey,
    logger: deps.logger,
    ...(deps.sqlTimeoutMs === undefined ? {} : { timeoutMs: deps.sqlTimeoutMs }),
  });
  const runtime = { store: deps.store, readModel: deps.readModel, sql, refresh, now: deps.now };
  return [
    ...lakeConfigRoutes({ store: deps.store, readModel: deps.readModel, writer }),
    ...lakeRuntimeRoutes(runtime),
  ];
}
