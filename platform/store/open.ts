import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { errnoOf } from '../errno.js';
import { EmbeddedStore } from './embedded.js';
import { KubernetesStore } from './kubernetes.js';
import type { KubernetesStoreOptions } from './kubernetes.js';
import type { ResourceStore } from './types.js';

/** The embedded store keeps its files here, inside the data directory. */
export const embeddedStoreDir = (dataDir: string): string => join(dataDir, 'store');

/**
 * Opens the store the configuration names: an explicit kubeconfig wins over AGENTRY_STORE.
 * `kubernetes` applies to a Kubernetes store (the API server asks for HTTP/2).
 */
export async function openStore(
  config: Pick<Config, 'AGENTRY_STORE' | 'AGENTRY_DATA_DIR' | 'KUBECONFIG'>,
  kubeconfigPath?: string,
  kubernetes: KubernetesStoreOptions = {},
): Promise<ResourceStore> {
  const path = kubeconfigPath ?? (config.AGENTRY_STORE === 'kubernetes' ? config.KUBECONFIG : undefined);
  if (path !== undefined) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(path);
    return KubernetesStore.fromKubeConfig(kubeConfig, kubernetes);
  }
  if (config.AGENTRY_STORE === 'kubernetes') return KubernetesStore.fromDefault(kubernetes);
  return openEmbeddedStore(config.AGENTRY_DATA_DIR);
}

/** Why a data directory cannot be written, by the system error underneath. */
const UNWRITABLE: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOTDIR: 'a file is in the way',
  EEXIST: 'a file is in the way',
  ENOSPC: 'no space left on the device',
};

/** The embedded store in the data directory; one that cannot be written is a setting to change. */
async function openEmbeddedStore(dataDir: string): Promise<ResourceStore> {
  try {
    return await EmbeddedStore.open(embeddedStoreDir(dataDir));
  } catch (err) {
    const code = errnoOf(err instanceof Error ? err.cause : undefined);
    const reason = code !== undefined && Object.hasOwn(UNWRITABLE, code) ? UNWRITABLE[code] : undefined;
    if (reason === undefined) throw err;
    throw new ConfigError(
      `cannot write the data directory ${dataDir} (${reason}); set AGENTRY_DATA_DIR to a writable directory`,
      { cause: err },
    );
  }
}
