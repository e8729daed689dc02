// The default warm pool the Organization reconciler keeps in each organization's namespace: from
// the organization's spec.workspacePool, else the installation's setting; a user's own is left alone.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_POOL_NAME,
  OrganizationSpecSchema,
  OrganizationType,
  WorkspacePoolSpecSchema,
  WorkspacePoolType,
  apiVersionOf,
} from '../../crds/index.js';
import type { Organization, WorkspacePoolSpec } from '../../crds/index.js';
import { OrganizationReconciler } from '../../operator/organization/reconciler.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { createPool } from '../support/pool-members.js';

const NAMESPACE = 'agentry-org-acme';
let dir: string;
let store: EmbeddedStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-org-pool-'));
  store = await EmbeddedStore.open(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const reconcilerWith = (installationDefault?: WorkspacePoolSpec): OrganizationReconciler =>
  new OrganizationReconciler({
    store,
    logger: createLogger({ level: 'silent' }),
    controlNamespace: 'agentry-system',
    defaultWorkspacePool: installationDefault,
  });

const createOrganization = (workspacePool?: Record<string, unknown>): Promise<Organization> =>
  store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: OrganizationType.kind,
    metadata: { name: 'acme' },
    spec: OrganizationSpecSchema.parse({
      displayName: 'Acme',
      ...(workspacePool === undefined ? {} : { workspacePool }),
    }),
  });

async function setOrganizationPool(workspacePool: Record<string, unknown> | undefined): Promise<void> {
  const org = await store.get(OrganizationType, undefined, 'acme');
  if (org === undefined) throw new Error('organization gone');
  const { workspacePool: _dropped, ...rest } = org.spec;
  const spec =
    workspacePool === undefined
      ? rest
      : { ...rest, workspacePool: WorkspacePoolSpecSchema.parse(workspacePool) };
  await store.replace(OrganizationType, { ...org, spec: OrganizationSpecSchema.parse(spec) });
}

const defaultPool = () => store.get(WorkspacePoolType, NAMESPACE, DEFAULT_POOL_NAME);
const installationDefault = WorkspacePoolSpecSchema.parse({ minReady: 3 });

describe("an organization's default pool", () => {
  it("is made from the installation's setting, labelled as Agentry's and owned by the organization", async () => {
    const org = await createOrganization();
    await reconcilerWith(installationDefault).reconcile({ name: 'acme' });
    const pool = await defaultPool();
    expect(pool?.spec).toEqual(installationDefault);
    expect(pool?.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'agentry' });
    expect(pool?.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'Organization',
        name: 'acme',
        uid: org.metadata.uid,
        controller: true,
      }),
    ]);
  });

  it("takes the organization's own setting over the installation's", async () => {
    await createOrganization({ minReady: 0 });
    await reconcilerWith(installationDefault).reconcile({ name: 'acme' });
    expect((await defaultPool())?.spec.minReady).toBe(0);
  });

  it('follows a change of the setting, and writes nothing when it did not change', async () => {
    await createOrganization({ minReady: 1 });
    const reconciler = reconcilerWith();
    await reconciler.reconcile({ name: 'acme' });
    const first = await defaultPool();
    await reconciler.reconcile({ name: 'acme' });
    expect((await defaultPool())?.metadata.resourceVersion).toBe(first?.metadata.resourceVersion);
    await setOrganizationPool({ minReady: 4, maxReady: 8 });
    await reconciler.reconcile({ name: 'acme' });
    expect((await defaultPool())?.spec).toMatchObject({ minReady: 4, maxReady: 8 });
  });

  it('is deleted when neither the organization nor the installation sets one', async () => {
    await createOrganization({ minReady: 1 });
    const reconciler = reconcilerWith();
    await reconciler.reconcile({ name: 'acme' });
    expect(await defaultPool()).toBeDefined();
    await setOrganizationPool(undefined);
    await reconciler.reconcile({ name: 'acme' });
    expect(await defaultPool()).toBeUndefined();
  });

  it('leaves a pool named default that a user made alone, whatever the settings', async () => {
    await createOrganization({ minReady: 1 });
    const own = await createPool(store, NAMESPACE, { name: DEFAULT_POOL_NAME, minReady: 5 });
    await reconcilerWith(installationDefault).reconcile({ name: 'acme' });
    await setOrganizationPool(undefined);
    await reconcilerWith().reconcile({ name: 'acme' });
    const pool = await defaultPool();
    expect(pool?.metadata.resourceVersion).toBe(own.metadata.resourceVersion);
    expect(pool?.spec.minReady).toBe(5);
  });
});
