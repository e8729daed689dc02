// The workspace artifacts contract against S3ObjectStore on the cluster harness's moto: the API server
// streams uploads into S3 and downloads out of it, and its upload URLs are moto's presigned URLs.
// Other tests share moto: this file uses a bucket of its own and never resets it.
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { startTestApi } from '../support/api-server.js';
import { artifactsContract } from '../contracts/artifacts.contract.js';
import { useMotoBucket } from './moto-bucket.js';

const { bucket, connection } = useMotoBucket('artifacts');

artifactsContract(
  'S3 (moto)',
  async (artifactLimits) => {
    const objectStore = new S3ObjectStore({ bucket, ...connection() });
    const api = await startTestApi({ artifactLimits, objectStore });
    return {
      api,
      cleanup: async () => {
        await api.stop();
        objectStore.close();
      },
    };
  },
  {
    expiryNotEnforced:
      'moto 5.2.5 never checks X-Amz-Expires of presigned URLs (its source has no such check)',
  },
);
