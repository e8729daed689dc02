import {
  MANAGED_BY_AGENTRY_SELECTOR,
  NamespaceType,
  OrganizationType,
  WorkspacePoolType,
} from '../../crds/index.js';
import type { Organization } from '../../crds/index.js';
import { withNothingToClose } from '../controller/index.js';
import type { AddController, ReconcilerControllerDeps } from '../controller/index.js';
import { NetworkPolicyType } from '../runtimes/kube-objects.js';
import { OrganizationReconciler } from './reconciler.js';
import type { OrganizationReconcilerOptions } from './reconciler.js';

export type OrganizationControllerDeps = ReconcilerControllerDeps<OrganizationReconcilerOptions>;

/**
 * The `organization` controller: each organization's namespace, the NetworkPolicy fencing it, and
 * its default warm pool. Default 2 workers.
 */
export const addOrganizationController: AddController<OrganizationControllerDeps, Organization> = (
  manager,
  deps,
) =>
  withNothingToClose(
    manager.add({
      name: 'organization',
      for: OrganizationType,
      owns: [NamespaceType, NetworkPolicyType, WorkspacePoolType],
      // All are made with Agentry's label (an adopted namespace gets it on its first pass).
      ownedSelector: MANAGED_BY_AGENTRY_SELECTOR,
      reconciler: new OrganizationReconciler({
        store: deps.store,
        logger: deps.logger.child({ controller: 'organization' }),
        controlNamespace: deps.controlNamespace,
        defaultWorkspacePool: deps.defaultWorkspacePool,
      }),
      workers: deps.workers,
    }),
  );
