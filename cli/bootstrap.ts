import { OrganizationSpecSchema, OrganizationType, apiVersionOf } from '../crds/index.js';
import type { Organization } from '../crds/index.js';
import { apiKeyId, apiKeySecretName, issueApiKey, listApiKeys } from '../api/auth/api-keys.js';
import { NamespaceType, SecretType } from '../crds/index.js';
import { isStoreError } from '../platform/store/types.js';
import type { ResourceStore } from '../platform/store/types.js';

export const DEFAULT_ORGANIZATION = 'default';
export const DEFAULT_USER = 'admin';

/** Creates org `default` (plan pro) unless it exists; the embedded default's only tenant at first. */
export async function ensureDefaultOrganization(store: ResourceStore): Promise<Organization> {
  const existing = await store.get(OrganizationType, undefined, DEFAULT_ORGANIZATION);
  if (existing !== undefined) return existing;
  try {
    return await store.create(OrganizationType, {
      apiVersion: apiVersionOf(OrganizationType),
      kind: OrganizationType.kind,
      metadata: { name: DEFAULT_ORGANIZATION },
      spec: OrganizationSpecSchema.parse({
        displayName: 'Default organization',
        plan: 'pro',
        // The embedded default runs on one machine, where webhook receivers are usually local.
        allowPrivateWebhookTargets: true,
      }),
    });
  } catch (err) {
    const raced = isStoreError(err, 'AlreadyExists')
      ? await store.get(OrganizationType, undefined, DEFAULT_ORGANIZATION)
      : undefined;
    if (raced === undefined) throw err;
    return raced;
  }
}

/** Creates the namespace unless it exists (a cluster needs it before Secrets go in; embedded, harmless). */
export async function ensureNamespace(store: ResourceStore, name: string): Promise<void> {
  if ((await store.get(NamespaceType, undefined, name)) !== undefined) return;
  try {
    await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (err) {
    if (!isStoreError(err, 'AlreadyExists')) throw err;
  }
}

/**
 * The bootstrap key: with `fixedKey` (AGENTRY_API_KEY) that key, created if missing; otherwise a
 * new key only when the default organization has none. Returns a key only when it was just made.
 */
export async function ensureBootstrapKey(
  store: ResourceStore,
  controlNamespace: string,
  fixedKey: string | undefined,
): Promise<string | undefined> {
  const input = {
    organization: DEFAULT_ORGANIZATION,
    user: DEFAULT_USER,
    scopes: ['*' as const],
    name: 'bootstrap',
  };
  if (fixedKey !== undefined) {
    const existing = await store.get(SecretType, controlNamespace, apiKeySecretName(apiKeyId(fixedKey)));
    if (existing === undefined) await issueApiKey(store, controlNamespace, { ...input, key: fixedKey });
    return undefined;
  }
  const keys = await listApiKeys(store, controlNamespace, { organization: DEFAULT_ORGANIZATION });
  if (keys.length > 0) return undefined;
  const { key } = await issueApiKey(store, controlNamespace, input);
  return key;
}
