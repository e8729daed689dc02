import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceType, OrganizationSpecSchema, OrganizationType, apiVersionOf } from '../../crds/index.js';
import { DEFAULT_POLICY_NAME, OrganizationReconciler } from '../../operator/organization/reconciler.js';
import { NetworkPolicyType } from '../../operator/runtimes/kube-objects.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';

let dir: string;
let store: EmbeddedStore;
let reconciler: OrganizationReconciler;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-org-'));
  store = await EmbeddedStore.open(dir);
  reconciler = new OrganizationReconciler({
    store,
    logger: createLogger({ level: 'silent' }),
    controlNamespace: 'agentry-system',
  });
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: 'acme' },
    spec: OrganizationSpecSchema.parse({ displayName: 'Acme' }),
  });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('OrganizationReconciler', () => {
  it("makes the organization's namespace, labelled and owned by it", async () => {
    await reconciler.reconcile({ name: 'acme' });
    const namespace = await store.get(NamespaceType, undefined, 'agentry-org-acme');
    expect(namespace?.metadata.labels).toMatchObject({ 'agentry.dev/organization': 'acme' });
    expect(namespace?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Organization',
      name: 'acme',
      controller: true,
    });
  });

  it('closes the namespace to every namespace but the control plane', async () => {
    await reconciler.reconcile({ name: 'acme' });
    const policy = await store.get(NetworkPolicyType, 'agentry-org-acme', DEFAULT_POLICY_NAME);
    expect(policy?.spec).toMatchObject({
      podSelector: {},
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'agentry-system' } } }],
        },
      ],
    });
  });

  it('reports Ready with the namespace and the generation it observed', async () => {
    await reconciler.reconcile({ name: 'acme' });
    const org = await store.get(OrganizationType, undefined, 'acme');
    expect(org?.status?.namespace).toBe('agentry-org-acme');
    expect(org?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'NamespaceReady',
      observedGeneration: org?.metadata.generation,
    });
  });

  it('writes nothing on a second pass over a converged organization', async () => {
    await reconciler.reconcile({ name: 'acme' });
    const before = await store.get(OrganizationType, undefined, 'acme');
    const policyBefore = await store.get(NetworkPolicyType, 'agentry-org-acme', DEFAULT_POLICY_NAME);
    await reconciler.reconcile({ name: 'acme' });
    expect((await store.get(OrganizationType, undefined, 'acme'))?.metadata.resourceVersion).toBe(
      before?.metadata.resourceVersion,
    );
    expect(
      (await store.get(NetworkPolicyType, 'agentry-org-acme', DEFAULT_POLICY_NAME))?.metadata.resourceVersion,
    ).toBe(policyBefore?.metadata.resourceVersion);
  });
});
