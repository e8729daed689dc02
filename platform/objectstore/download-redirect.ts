import { isIP } from 'node:net';
import { z } from 'zod';
import { classifyAddress } from '../outbound-targets.js';
import type { DownloadUrlSigner, ObjectStore } from './types.js';

/**
 * AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT: whether artifact downloads answer 307 to a presigned URL of
 * the S3 store instead of streaming the bytes through the API. `auto` redirects when clients can
 * reach the endpoint (see `clientsCanReach`); the directory store always streams.
 */
export const DownloadRedirectSetting = z.enum(['auto', 'always', 'never']).default('auto');
export type DownloadRedirect = z.infer<typeof DownloadRedirectSetting>;

/** Names that resolve only inside a cluster, a host or a LAN (RFC 6761, RFC 6762, Kubernetes DNS). */
const INTERNAL_NAME = /(^|\.)(localhost|local|internal|svc|cluster\.local|home\.arpa)$/i;

/**
 * Whether a client outside the cluster can be assumed to reach the S3 endpoint, decided from its
 * URL alone (the server's DNS view is not the client's): AWS itself (no endpoint), a public IP
 * address, or a dotted name that is not cluster- or host-internal. `minio`, `moto.agentry.svc`,
 * 10.0.0.5 or 127.0.0.1 are not; `always` and `never` override the guess.
 */
export function clientsCanReach(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return true;
  const host = new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (isIP(host) !== 0) return classifyAddress(host).refusal === undefined;
  return host.includes('.') && !INTERNAL_NAME.test(host);
}

/** The store artifact downloads redirect to, when the settings and the store say they should; else undefined (stream). */
export function downloadRedirectTarget(
  config: { AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT: DownloadRedirect; AGENTRY_S3_ENDPOINT?: string | undefined },
  store: ObjectStore,
): DownloadUrlSigner | undefined {
  const setting = config.AGENTRY_ARTIFACT_DOWNLOAD_REDIRECT;
  if (setting === 'never' || !isDownloadUrlSigner(store)) return undefined;
  return setting === 'always' || clientsCanReach(config.AGENTRY_S3_ENDPOINT) ? store : undefined;
}

const isDownloadUrlSigner = (store: ObjectStore): store is ObjectStore & DownloadUrlSigner =>
  'signedDownloadUrl' in store && typeof store.signedDownloadUrl === 'function';
