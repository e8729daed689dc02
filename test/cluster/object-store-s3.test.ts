// The object store conformance suite, unchanged, against S3ObjectStore on the cluster harness's moto.
// Other tests share moto, so this file uses a bucket of its own and never resets it.
import { describe, expect, it } from '@jest/globals';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { objectStoreContract } from '../contracts/object-store.contract.js';
import { useMotoBucket } from './moto-bucket.js';

const { bucket, connection } = useMotoBucket('objects');

objectStoreContract(
  'S3ObjectStore on moto',
  () => {
    const store = new S3ObjectStore({ bucket, ...connection() });
    return Promise.resolve({
      store,
      cleanup: () => {
        store.close();
        return Promise.resolve();
      },
    });
  },
  {
    expiryNotEnforced:
      'moto 5.2.5 never checks X-Amz-Expires of presigned URLs (its source has no such check)',
    declaredSizeNotEnforced:
      'moto 5.2.5 does not verify presigned signatures, so a Content-Length other than the signed one passes (S3 answers 403)',
  },
);

describe('S3ObjectStore on its own', () => {
  it('aborts the multipart upload of a body that grows past maxSize: no parts stay behind', async () => {
    const store = new S3ObjectStore({ bucket, ...connection() });
    const admin = new S3Client(connection());
    try {
      const key = `aborted-${randomBytes(4).toString('hex')}/big.bin`;
      const body = Readable.from(
        (function* () {
          for (let i = 0; i < 160; i++) yield Buffer.alloc(64 * 1024, i); // 10 MiB: two parts at least
        })(),
      );
      await expect(store.put(key, body, { maxSize: 7 * 1024 * 1024 })).rejects.toMatchObject({
        reason: 'TooLarge',
      });
      const { Uploads = [] } = await admin.send(
        new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }),
      );
      expect(Uploads).toEqual([]);
      expect(await store.head(key)).toBeUndefined();
    } finally {
      store.close();
      admin.destroy();
    }
  });
});
