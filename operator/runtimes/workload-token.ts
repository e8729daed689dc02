import { SecretType, secretData, secretValue } from '../../crds/index.js';
import type { KubeObject } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { controllerReference } from './ensure-object.js';

/**
 * Keeps a workload's token in a Secret the resource owns (key `token`), for runtimes that mount it
 * (pods) rather than receive it (process, cloud-init). The token is derived from the installation
 * key, so the API server computes the same value without reading this Secret; a rotated key
 * rewrites it.
 */
export async function ensureWorkloadToken(
  store: ResourceStore,
  owner: KubeObject,
  secret: { name: string; type: string; labels: Record<string, string> },
  token: string,
): Promise<void> {
  const existing = await store.get(SecretType, owner.metadata.namespace, secret.name);
  if (existing !== undefined) {
    if (secretValue(existing, 'token') !== token)
      await store.replace(SecretType, { ...existing, data: secretData({ token }) });
    return;
  }
  try {
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: secret.type,
      metadata: {
        name: secret.name,
        namespace: owner.metadata.namespace,
        labels: secret.labels,
        ownerReferences: [controllerReference(owner)],
      },
      data: secretData({ token }),
    });
  } catch (err) {
    if (!isStoreError(err, 'AlreadyExists')) throw err; // a racing reconcile wrote the same value
  }
}
