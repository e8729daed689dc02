// The resource-store conformance suite, unchanged, against the real kube-apiserver of the test
// cluster: the Kubernetes store must behave exactly as the embedded one does.
import { afterAll } from '@jest/globals';
import { describeStoreContract } from '../contracts/store/contract.js';
import { clusterStore, createTestNamespace } from './support.js';

let namespace: Promise<string> | undefined;
const admin = clusterStore();

afterAll(async () => {
  await admin.close();
});

describeStoreContract('KubernetesStore on kube-apiserver', async () => {
  // One namespace for the file: the suite labels and names every object per test.
  namespace ??= createTestNamespace(admin, 'contract');
  const store = clusterStore();
  return {
    store,
    namespace: await namespace,
    async cleanup() {
      await store.close();
    },
  };
});
