import { join } from 'node:path';
import type { Config } from '../config.js';
import type { InstallationKey } from '../installation-key.js';
import { FilesystemObjectStore } from './filesystem.js';
import { S3ObjectStore } from './s3.js';
import type { ObjectStore } from './types.js';

/** The purpose the filesystem store's URL-signing key is derived for (API and operator must agree). */
export const OBJECT_STORE_URL_PURPOSE = 'object-store-urls';

/**
 * The configured object store. The filesystem one signs URLs with a key derived from the
 * installation key, so that the API server (which serves them) and an operator in another process
 * (which hands them to runners) agree without a further secret.
 */
export function openObjectStore(
  config: Pick<
    Config,
    | 'AGENTRY_OBJECT_STORE'
    | 'AGENTRY_DATA_DIR'
    | 'AGENTRY_S3_BUCKET'
    | 'AGENTRY_S3_REGION'
    | 'AGENTRY_S3_ENDPOINT'
    | 'AGENTRY_S3_FORCE_PATH_STYLE'
  >,
  options: { installationKey: InstallationKey; publicUrl: string },
): ObjectStore {
  if (config.AGENTRY_OBJECT_STORE === 'filesystem') {
    return new FilesystemObjectStore({
      root: join(config.AGENTRY_DATA_DIR, 'objects'),
      baseUrl: options.publicUrl,
      signingSecret: options.installationKey.derive(OBJECT_STORE_URL_PURPOSE),
    });
  }
  if (config.AGENTRY_S3_BUCKET === undefined)
    throw new Error('AGENTRY_S3_BUCKET is required when AGENTRY_OBJECT_STORE is s3');
  return new S3ObjectStore({
    bucket: config.AGENTRY_S3_BUCKET,
    region: config.AGENTRY_S3_REGION,
    forcePathStyle: config.AGENTRY_S3_FORCE_PATH_STYLE,
    ...(config.AGENTRY_S3_ENDPOINT === undefined ? {} : { endpoint: config.AGENTRY_S3_ENDPOINT }),
  });
}
