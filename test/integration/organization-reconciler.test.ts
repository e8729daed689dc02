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

const createOrganization = (name: string, namespace?: string): Promise<unknown> =>
  store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name },
    spec: OrganizationSpecSchema.parse({ displayName: name, namespace }),
  });

/** A namespace made before the organization, as `kubectl apply -f examples/` makes it. */
const createNamespace = (name: string, labels: Record<string, string>): Promise<unknown> =>
  store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

const readyCondition = async (name: string) =>
  (await store.get(OrganizationType, undefined, name))?.status?.conditions?.find((c) => c.type === 'Ready');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-org-'));
  store = await EmbeddedStore.open(dir);
  reconciler = new OrganizationReconciler({
    store,
    logger: createLogger({ level: 'silent' }),
    controlNamespace: 'agentry-system',
  });
  await createOrganization('acme');
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

  it('adopts a namespace made before it: adds its labels and policy, keeps the owner out, and is Ready', async () => {
    await createOrganization('globex', 'globex-agents');
    await createNamespace('globex-agents', { 'agentry.dev/organization': 'globex', team: 'data' });
    await reconciler.reconcile({ name: 'globex' });
    const namespace = await store.get(NamespaceType, undefined, 'globex-agents');
    expect(namespace?.metadata.labels).toEqual({
      'agentry.dev/organization': 'globex',
      'app.kubernetes.io/managed-by': 'agentry',
      team: 'data',
    });
    // No owner reference: deleting the organization must not take a namespace it did not make.
    expect(namespace?.metadata.ownerReferences ?? []).toEqual([]);
    expect(await store.get(NetworkPolicyType, 'globex-agents', DEFAULT_POLICY_NAME)).toBeDefined();
    expect(await readyCondition('globex')).toMatchObject({ status: 'True', reason: 'NamespaceReady' });
  });

  it('refuses a namespace labelled for another organization that exists, and leaves it as it was', async () => {
    await reconciler.reconcile({ name: 'acme' });
    await createOrganization('intruder', 'agentry-org-acme');
    const before = await store.get(NamespaceType, undefined, 'agentry-org-acme');
    await expect(reconciler.reconcile({ name: 'intruder' })).rejects.toThrow(/belongs to organization acme/);
    expect((await store.get(NamespaceType, undefined, 'agentry-org-acme'))?.metadata).toEqual(
      before?.metadata,
    );
    expect(await readyCondition('intruder')).toMatchObject({
      status: 'False',
      reason: 'NamespaceFailed',
      message:
        'namespace agentry-org-acme belongs to organization acme; set spec.namespace to another namespace',
    });
  });

  it('adopts a namespace whose organization label names an organization that no longer exists', async () => {
    await createNamespace('leftover', { 'agentry.dev/organization': 'gone' });
    await createOrganization('heir', 'leftover');
    await reconciler.reconcile({ name: 'heir' });
    const namespace = await store.get(NamespaceType, undefined, 'leftover');
    expect(namespace?.metadata.labels).toMatchObject({ 'agentry.dev/organization': 'heir' });
    expect(await readyCondition('heir')).toMatchObject({ status: 'True' });
  });
});
