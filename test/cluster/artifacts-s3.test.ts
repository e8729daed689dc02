// The workspace artifacts contract against S3ObjectStore on the cluster harness's moto: the API server
// streams uploads into S3 and downloads out of it, and its upload URLs are moto's presigned URLs.
// Other tests share moto: this file uses a bucket of its own and never resets it.
import { afterAll, beforeAll } from '@jest/globals';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import type { S3ObjectStoreOptions } from '../../platform/objectstore/s3.js';
import { startTestApi } from '../support/api-server.js';
import { artifactsContract } from '../contracts/artifacts.contract.js';
import { testCluster } from './support.js';

const bucket = `artifacts-${randomBytes(6).toString('hex')}`;
const connection = (): Omit<S3ObjectStoreOptions, 'bucket'> => ({
  region: 'us-east-1',
  endpoint: testCluster().motoUrl,
  forcePathStyle: true,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});

beforeAll(async () => {
  const admin = new S3Client(connection());
  try {
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    admin.destroy();
  }
});

afterAll(async () => {
  const store = new S3ObjectStore({ bucket, ...connection() });
  const admin = new S3Client(connection());
  try {
    await store.deletePrefix('');
    await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
  } finally {
    store.close();
    admin.destroy();
  }
});

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
