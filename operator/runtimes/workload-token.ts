import { SecretType, secretData, secretValue } from '../../crds/index.js';
import type { KubeObject, Secret } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import type { Caches } from '../controller/caches.js';
import { controllerReference } from './ensure-object.js';

/**
 * Keeps a workload's token in a Secret the resource owns (key `token`), for runtimes that mount it
 * (pods) rather than receive it (process, cloud-init). The token is derived from the installation
 * key, so the API server computes the same value without reading this Secret; a rotated key
 * rewrites it. With `cache` (the operator's Secret cache), the Secret is read there: a miss creates
 * it at once, and only a create that finds it there already reads the store.
 */
export async function ensureWorkloadToken(
  store: ResourceStore,
  owner: KubeObject,
  secret: { name: string; type: string; labels: Record<string, string> },
  token: string,
  cache?: Caches,
): Promise<void> {
  const { namespace } = owner.metadata;
  const cached = cache?.get(SecretType, namespace, secret.name);
  const existing = cache === undefined ? await store.get(SecretType, namespace, secret.name) : cached;
  if (existing !== undefined) {
    await rewriteToken(store, existing, token, cache);
    return;
  }
  try {
    const created = await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: secret.type,
      metadata: {
        name: secret.name,
        namespace,
        labels: secret.labels,
        ownerReferences: [controllerReference(owner)],
      },
      data: secretData({ token }),
    });
    cache?.observe(SecretType, created);
  } catch (err) {
    if (!isStoreError(err, 'AlreadyExists')) throw err;
    // Made by a racing reconcile (the same value), or missed by a cache a watch event behind.
    const stored = cache === undefined ? undefined : await store.get(SecretType, namespace, secret.name);
    if (stored !== undefined) await rewriteToken(store, stored, token, cache);
  }
}

async function rewriteToken(
  store: ResourceStore,
  existing: Secret,
  token: string,
  cache?: Caches,
): Promise<void> {
  if (secretValue(existing, 'token') === token) return;
  const written = await store.replace(SecretType, { ...existing, data: secretData({ token }) });
  cache?.observe(SecretType, written);
}
