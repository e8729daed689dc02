import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ensureNamespace } from '../../cli/bootstrap.js';
import { OrganizationSpecSchema, OrganizationType, SecretType, apiVersionOf } from '../../crds/index.js';
import { runAgentry } from '../support/spawn-cli.js';
import { clusterStore, testCluster } from './support.js';

const store = clusterStore();
const org = `cli-${randomBytes(3).toString('hex')}`;
const namespace = `keys-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  await ensureNamespace(store, namespace);
  await store.create(OrganizationType, {
    apiVersion: apiVersionOf(OrganizationType),
    kind: 'Organization',
    metadata: { name: org },
    spec: OrganizationSpecSchema.parse({ displayName: org }),
  });
});
afterAll(async () => {
  await store.close();
});

describe('agentry keys --kubeconfig', () => {
  it("creates, lists and revokes a key as a hashed Secret in the cluster's control namespace", async () => {
    const env = { AGENTRY_NAMESPACE: namespace };
    const kubeconfig = ['--kubeconfig', testCluster().kubeconfig];
    const created = await runAgentry(['keys', 'create', '--org', org, '--user', 'ci', ...kubeconfig], env);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();

    const { items } = await store.list(SecretType, {
      namespace,
      labelSelector: `agentry.dev/organization=${org}`,
    });
    expect(items).toHaveLength(1);
    expect(JSON.stringify(items)).not.toContain(Buffer.from(key).toString('base64'));

    const listed = await runAgentry(['keys', 'list', '--org', org, ...kubeconfig], env);
    const id = listed.stdout.split('\t')[0] ?? '';
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect((await runAgentry(['keys', 'revoke', id, ...kubeconfig], env)).code).toBe(0);
    expect((await store.list(SecretType, { namespace })).items).toHaveLength(0);
  }, 120_000);
});
