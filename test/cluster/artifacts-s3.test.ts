// The workspace artifacts contract against S3ObjectStore on the cluster harness's moto: the API server
// streams uploads into S3 and downloads out of it, and its upload URLs are moto's presigned URLs.
// It runs twice: downloads streamed, and downloads redirected to moto's presigned URLs (fetch follows
// them, as clients do: a client that follows the redirect sees what a streamed download shows).
// Other tests share moto: this file uses a bucket of its own and never resets it.
import type { ArtifactLimits } from '../../api/agent-computer/artifacts/routes.js';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { startTestApi } from '../support/api-server.js';
import { artifactsContract } from '../contracts/artifacts.contract.js';
import type { ArtifactsFixture } from '../contracts/artifacts.contract.js';
import { useMotoBucket } from './moto-bucket.js';

const { bucket, connection } = useMotoBucket('artifacts');

const onMoto =
  (downloads: 'streamed' | 'redirected') =>
  async (artifactLimits: Partial<ArtifactLimits>): Promise<ArtifactsFixture> => {
    const objectStore = new S3ObjectStore({ bucket, ...connection() });
    const api = await startTestApi({
      artifactLimits,
      objectStore,
      ...(downloads === 'redirected' ? { artifactDownloadRedirect: objectStore } : {}),
    });
    return {
      api,
      cleanup: async () => {
        await api.stop();
        objectStore.close();
      },
    };
  };

const options = {
  expiryNotEnforced: 'moto 5.2.5 never checks X-Amz-Expires of presigned URLs (its source has no such check)',
};

artifactsContract('S3 (moto)', onMoto('streamed'), options);
artifactsContract('S3 (moto), downloads redirected to presigned URLs', onMoto('redirected'), options);
