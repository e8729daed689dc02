// Leader election over the embedded store: two managers in one process share one store (the
// embedded store is single-process), each campaigning on the same Lease.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { describeLeaderElection } from '../contracts/leader-election.contract.js';

describeLeaderElection('EmbeddedStore', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-leader-'));
  const store = await EmbeddedStore.open(dir);
  return {
    store,
    namespace: 'agentry-system',
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
