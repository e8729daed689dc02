import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { Config } from '../config.js';
import { EmbeddedStore } from './embedded.js';
import { KubernetesStore } from './kubernetes.js';
import type { ResourceStore } from './types.js';

/** The embedded store keeps its files here, inside the data directory. */
export const embeddedStoreDir = (dataDir: string): string => join(dataDir, 'store');

/** Opens the store the configuration names: an explicit kubeconfig wins over AGENTRY_STORE. */
export async function openStore(
  config: Pick<Config, 'AGENTRY_STORE' | 'AGENTRY_DATA_DIR' | 'KUBECONFIG'>,
  kubeconfigPath?: string,
): Promise<ResourceStore> {
  const path = kubeconfigPath ?? (config.AGENTRY_STORE === 'kubernetes' ? config.KUBECONFIG : undefined);
  if (path !== undefined) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(path);
    return KubernetesStore.fromKubeConfig(kubeConfig);
  }
  if (config.AGENTRY_STORE === 'kubernetes') return KubernetesStore.fromDefault();
  return EmbeddedStore.open(embeddedStoreDir(config.AGENTRY_DATA_DIR));
}
