import {
  NamespaceType,
  OrganizationConditions,
  OrganizationType,
  apiVersionOf,
  organizationNamespace,
} from '../../crds/index.js';
import type { Namespace, Organization, OrganizationStatus } from '../../crds/index.js';
import type { Logger } from '../../platform/log.js';
import { deepEqual } from '../../platform/store/merge.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../controller/types.js';
import { setCondition } from './conditions.js';

export const ORGANIZATION_LABEL = 'agentry.dev/organization';

export interface OrganizationReconcilerOptions {
  store: ResourceStore;
  logger: Logger;
  now?: () => Date;
}

/** An organization's namespace, labelled as Agentry's and owned by the Organization. */
function desiredNamespace(org: Organization): Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: organizationNamespace(org),
      labels: { [ORGANIZATION_LABEL]: org.metadata.name, 'app.kubernetes.io/managed-by': 'agentry' },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(OrganizationType),
          kind: OrganizationType.kind,
          name: org.metadata.name,
          uid: org.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
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
          reason: failure === undefined ? 'NamespaceReady' : 'NamespaceFailed',
          message: failure ?? `resources live in namespace ${organizationNamespace(org)}`,
        },
        org.metadata.generation,
        this.now(),
      ),
    };
    if (!deepEqual(JSON.parse(JSON.stringify(org.status ?? {})), JSON.parse(JSON.stringify(status)))) {
      await this.options.store.replaceStatus(OrganizationType, { ...org, status });
    }
    if (failure !== undefined) throw new Error(`organization ${org.metadata.name}: ${failure}`);
    return undefined;
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
    const labels = { ...existing.metadata.labels, ...desired.metadata.labels };
    if (deepEqual(labels, existing.metadata.labels ?? {})) return;
    // A namespace made before the organization (GitOps) is adopted by labels, not taken over.
    await store.replace(NamespaceType, { ...existing, metadata: { ...existing.metadata, labels } });
  }
}
