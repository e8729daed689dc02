// The resource store conformance suite against the embedded store; the store's own behaviour on disk
// is in the embedded-store-*.test.ts files.
import { rm } from 'node:fs/promises';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { describeStoreContract } from '../contracts/store/contract.js';
import { tempDir } from './embedded-store-support.js';

describeStoreContract('EmbeddedStore', async () => {
  const dir = await tempDir();
  const store = await EmbeddedStore.open(dir);
  return {
    store,
    namespace: 'contract',
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
