// The organization's default warm pool (docs/adr/0008-warm-pools.md): a WorkspacePool named
// `default` in its namespace, made from Organization.spec.workspacePool or the installation's setting.
import {
  DEFAULT_POOL_NAME,
  MANAGED_BY_LABEL,
  WorkspacePoolType,
  apiVersionOf,
  organizationNamespace,
} from '../../crds/index.js';
import type { Organization, OwnerReference, WorkspacePool, WorkspacePoolSpec } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { deleteIfOwned, ensureObject } from '../runtimes/ensure-object.js';

/** What happened to the default pool in one pass, for logs. */
export type DefaultPoolOutcome = 'created' | 'updated' | 'unchanged' | 'deleted' | 'none' | 'user-owned';

const isManaged = (pool: WorkspacePool): boolean => pool.metadata.labels?.[MANAGED_BY_LABEL] === 'agentry';
const isControlledBy = (pool: WorkspacePool, uid: string | undefined): boolean =>
  (pool.metadata.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === uid);

function defaultPool(org: Organization, owner: OwnerReference, spec: WorkspacePoolSpec): WorkspacePool {
  return {
    apiVersion: apiVersionOf(WorkspacePoolType),
    kind: WorkspacePoolType.kind,
    metadata: {
      name: DEFAULT_POOL_NAME,
      namespace: organizationNamespace(org),
      labels: { [MANAGED_BY_LABEL]: 'agentry' },
      ownerReferences: [owner],
    },
    spec,
  };
}

/**
 * Keeps the organization's default pool at `org.spec.workspacePool ?? installationDefault`: made,
 * its spec updated when the setting changes, deleted when neither is set. A pool named `default`
 * that a user made (not labelled as Agentry's) is theirs: it is left alone.
 */
export async function ensureDefaultPool(
  store: ResourceStore,
  org: Organization,
  owner: OwnerReference,
  installationDefault: WorkspacePoolSpec | undefined,
  logger: Logger,
): Promise<DefaultPoolOutcome> {
  const namespace = organizationNamespace(org);
  const existing = await store.get(WorkspacePoolType, namespace, DEFAULT_POOL_NAME);
  if (existing !== undefined && !isManaged(existing)) {
    logger.debug({ organization: org.metadata.name, namespace }, 'default pool is user-owned; left alone');
    return 'user-owned';
  }
  const spec = org.spec.workspacePool ?? installationDefault;
  if (spec === undefined) {
    if (existing === undefined || !isControlledBy(existing, org.metadata.uid)) return 'none';
    await deleteIfOwned(store, WorkspacePoolType, existing);
    return 'deleted';
  }
  const { wrote } = await ensureObject(store, WorkspacePoolType, defaultPool(org, owner, spec), {
    merge: 'replace',
  });
  return wrote;
}
