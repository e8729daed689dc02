// Leader election against a real kube-apiserver: coordination.k8s.io/v1 Leases, MicroTime renew
// times and resourceVersion conflicts as Kubernetes enforces them.
import { afterAll } from '@jest/globals';
import { describeLeaderElection } from '../contracts/leader-election.contract.js';
import { clusterStore, createTestNamespace } from './support.js';

const admin = clusterStore();
let namespace: Promise<string> | undefined;

afterAll(async () => {
  await admin.close();
});

describeLeaderElection('KubernetesStore on kube-apiserver', async () => {
  // One namespace for the file: every test campaigns on a Lease of its own.
  namespace ??= createTestNamespace(admin, 'leader');
  const store = clusterStore();
  return {
    store,
    namespace: await namespace,
    async cleanup() {
      await store.close();
    },
  };
});
