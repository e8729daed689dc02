import {
  MANAGED_BY_LABEL,
  NamespaceType,
  OrganizationConditions,
  OrganizationReasons,
  OrganizationType,
  apiVersionOf,
  organizationNamespace,
} from '../../crds/index.js';
import type {
  Namespace,
  Organization,
  OrganizationStatus,
  OwnerReference,
  WorkspacePoolSpec,
} from '../../crds/index.js';
import { NetworkPolicyType } from '../runtimes/kube-objects.js';
import { ensureObject } from '../runtimes/ensure-object.js';
import type { NetworkPolicy } from '../runtimes/kube-objects.js';
import { CONTROL_PLANE_APPS } from '../runtimes/network-policy.js';
import type { Logger } from '../../platform/log.js';
import { deepEqual } from '../../platform/store/merge.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { writeStatus } from '../../platform/store/status-writer.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { setCondition } from '../../crds/conditions.js';
import { ensureDefaultPool } from './default-pool.js';

export const ORGANIZATION_LABEL = 'agentry.dev/organization';

export interface OrganizationReconcilerOptions {
  store: ResourceStore;
  /** Where the API server and operator run: the only namespace admitted into an organization's. */
  controlNamespace: string;
  logger: Logger;
  /** The installation's warm pool (AGENTRY_DEFAULT_WORKSPACE_POOL) for organizations that set none. */
  defaultWorkspacePool?: WorkspacePoolSpec | undefined;
  now?: () => Date;
}

const organizationOwner = (org: Organization): OwnerReference => ({
  apiVersion: apiVersionOf(OrganizationType),
  kind: OrganizationType.kind,
  name: org.metadata.name,
  uid: org.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

export const DEFAULT_POLICY_NAME = 'agentry-default-deny-ingress';

/**
 * Every pod in an organization's namespace refuses traffic except from Agentry's control plane,
 * so one organization's workloads can never reach another's, whatever a workload policy says.
 */
function defaultNetworkPolicy(org: Organization, controlNamespace: string): NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: DEFAULT_POLICY_NAME,
      namespace: organizationNamespace(org),
      labels: { [ORGANIZATION_LABEL]: org.metadata.name, [MANAGED_BY_LABEL]: 'agentry' },
      ownerReferences: [organizationOwner(org)],
    },
    spec: {
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': controlNamespace } },
              podSelector: {
                matchExpressions: [
                  { key: 'app.kubernetes.io/name', operator: 'In', values: [...CONTROL_PLANE_APPS] },
                ],
              },
            },
          ],
        },
      ],
    },
  };
}

/** An organization's namespace, labelled as Agentry's and owned by the Organization. */
function desiredNamespace(org: Organization): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: organizationNamespace(org),
      labels: { [ORGANIZATION_LABEL]: org.metadata.name, [MANAGED_BY_LABEL]: 'agentry' },
      ownerReferences: [organizationOwner(org)],
    },
  };
}

/** Converges an Organization: its namespace exists and is labelled; status says so. */
export class OrganizationReconciler implements Reconciler {
  private readonly now: () => Date;

  constructor(private readonly options: OrganizationReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult | undefined> {
    const org = await this.options.store.get(OrganizationType, undefined, request.name);
    if (org === undefined || org.metadata.deletionTimestamp !== undefined) return undefined;
    let failure: string | undefined;
    try {
      await this.ensureNamespace(org);
      await ensureObject(
        this.options.store,
        NetworkPolicyType,
        defaultNetworkPolicy(org, this.options.controlNamespace),
        {
          merge: 'replace',
        },
      );
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
    const status: OrganizationStatus = {
      ...org.status,
      namespace: organizationNamespace(org),
      observedGeneration: org.metadata.generation,
      conditions: setCondition(
        org.status?.conditions,
        {
          type: OrganizationConditions.Ready,
          status: failure === undefined ? 'True' : 'False',
          reason:
            failure === undefined ? OrganizationReasons.NamespaceReady : OrganizationReasons.NamespaceFailed,
          message:
            failure ??
            `resources live in namespace ${organizationNamespace(org)}, closed to other namespaces`,
        },
        org.metadata.generation,
        this.now(),
      ),
    };
    await writeStatus(this.options.store, OrganizationType, org, status);
    if (failure !== undefined) throw new Error(`organization ${org.metadata.name}: ${failure}`);
    await this.ensurePool(org);
    return undefined;
  }

  /** After the namespace: the pool lives in it. A failure retries with back-off. */
  private async ensurePool(org: Organization): Promise<void> {
    const { store, logger, defaultWorkspacePool } = this.options;
    const outcome = await ensureDefaultPool(store, org, organizationOwner(org), defaultWorkspacePool, logger);
    if (outcome !== 'unchanged' && outcome !== 'none' && outcome !== 'user-owned') {
      logger.info({ organization: org.metadata.name, outcome }, 'default warm pool');
    }
  }

  private async ensureNamespace(org: Organization): Promise<void> {
    const { store } = this.options;
    const desired = desiredNamespace(org);
    const existing = await store.get(NamespaceType, undefined, desired.metadata.name);
    if (existing === undefined) {
      try {
        await store.create(NamespaceType, desired);
      } catch (err) {
        if (!isStoreError(err, 'AlreadyExists')) throw err;
      }
      return;
    }
    await this.refuseAnotherOrganizations(org, existing);
    const labels = { ...existing.metadata.labels, ...desired.metadata.labels };
    if (deepEqual(labels, existing.metadata.labels ?? {})) return;
    // A namespace made before the organization (GitOps: docs/adr/0006) is adopted by labels, never
    // owned: deleting the organization leaves it, and what is in it, to whoever made it.
    await store.replace(NamespaceType, { ...existing, metadata: { ...existing.metadata, labels } });
  }

  /**
   * Two organizations in one namespace would see each other's workspaces and secrets, so a
   * namespace labelled for another organization that still exists is not adopted. A label left by
   * a deleted organization does not hold a namespace back.
   */
  private async refuseAnotherOrganizations(org: Organization, namespace: Namespace): Promise<void> {
    const holder = namespace.metadata.labels?.[ORGANIZATION_LABEL];
    if (holder === undefined || holder === org.metadata.name) return;
    if ((await this.options.store.get(OrganizationType, undefined, holder)) === undefined) return;
    throw new Error(
      `namespace ${namespace.metadata.name} belongs to organization ${holder}; set spec.namespace to another namespace`,
    );
  }
}
