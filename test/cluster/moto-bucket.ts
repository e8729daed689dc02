import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import type { S3ObjectStoreOptions } from '../../platform/objectstore/s3.js';
import { testCluster } from './support.js';

export type MotoConnection = Omit<S3ObjectStoreOptions, 'bucket'>;

/** How the object store reaches the harness's moto (dummy credentials, path-style addressing). */
export const motoConnection = (): MotoConnection => ({
  region: 'us-east-1',
  endpoint: testCluster().motoUrl,
  forcePathStyle: true,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
});

/**
 * A bucket of the calling test file's own on moto (which every cluster test shares, so none resets
 * it): created before the file's tests, emptied and deleted after them.
 */
export function useMotoBucket(prefix: string): { bucket: string; connection: () => MotoConnection } {
  const bucket = `${prefix}-${randomBytes(6).toString('hex')}`;
  beforeAll(async () => {
    const admin = new S3Client(motoConnection());
    try {
      await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      admin.destroy();
    }
  });
  afterAll(async () => {
    const store = new S3ObjectStore({ bucket, ...motoConnection() });
    const admin = new S3Client(motoConnection());
    try {
      await store.deletePrefix('');
      await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
    } finally {
      store.close();
      admin.destroy();
    }
  });
  return { bucket, connection: motoConnection };
}
