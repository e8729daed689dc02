import { AgentComputerType, POOL_LABEL, WorkspacePoolType } from '../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../crds/index.js';
import { withNothingToClose } from '../controller/index.js';
import type { AddController, ReconcilerControllerDeps } from '../controller/index.js';
import { WorkspacePoolMetrics } from './metrics.js';
import { WorkspacePoolReconciler } from './reconciler.js';
import type { WorkspacePoolReconcilerOptions } from './reconciler.js';

export type WorkspacePoolControllerDeps = ReconcilerControllerDeps<
  WorkspacePoolReconcilerOptions,
  'caches' | 'membersOf' | 'metrics'
>;

/** The pool a member (available or claimed: the label stays) belongs to. */
const poolOf = (ac: AgentComputer): string | undefined => ac.metadata.labels?.[POOL_LABEL];

/**
 * The `workspacepool` controller, woken by its pools and by every AgentComputer carrying a pool
 * label: a member becoming ready, failing, being claimed or deleted changes what the pool must do.
 * Default 2 workers: a pass is a few writes, and there are few pools per organization.
 */
export const addWorkspacePoolController: AddController<WorkspacePoolControllerDeps, WorkspacePool> = (
  manager,
  deps,
) => {
  const members = manager.index(AgentComputerType, 'workspace-pool', poolOf);
  return withNothingToClose(
    manager.add({
      name: 'workspacepool',
      for: WorkspacePoolType,
      watches: [
        {
          type: AgentComputerType,
          map: (ac: AgentComputer) => {
            const pool = poolOf(ac);
            return pool === undefined ? [] : [{ namespace: ac.metadata.namespace, name: pool }];
          },
        },
      ],
      reconciler: new WorkspacePoolReconciler({
        store: deps.store,
        caches: manager.caches,
        membersOf: (namespace, pool) => members.list(namespace, pool),
        metrics: new WorkspacePoolMetrics(deps.registry),
        events: deps.events,
        logger: deps.logger.child({ controller: 'workspacepool' }),
        failedMemberGraceMs: deps.failedMemberGraceMs,
      }),
      workers: deps.workers,
    }),
  );
};
