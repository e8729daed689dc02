import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SecretType, secretData, secretValue } from '../crds/index.js';
import { isStoreError } from './store/types.js';
import type { ResourceStore } from './store/types.js';

/**
 * One random key per installation, in a Secret of the control-plane namespace. Runner tokens and
 * share-link tokens are derived from it with HMAC, so the API server can talk to any runner and
 * check any share link while reading Secrets only in its own namespace, and no resource holds a
 * credential. Rotating the key (delete the Secret, restart) changes every runner token (workloads
 * are redeployed by the operator) and kills every share link.
 */
export const INSTALLATION_KEY_SECRET = 'agentry-installation-key';
const KEY_FIELD = 'key';

export class InstallationKey {
  constructor(private readonly key: Buffer) {}

  private mac(purpose: string, subject: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\n${subject}`).digest('base64url');
  }

  /** The token the runner of one workload requires; bound to the object's uid, so a re-created name gets a new one. */
  runnerToken(object: {
    metadata: { namespace?: string | undefined; name: string; uid?: string | undefined };
  }): string {
    const { namespace, name, uid } = object.metadata;
    return this.mac('runner-token', `${namespace ?? ''}/${name}/${uid ?? ''}`);
  }

  /**
   * A secret for one purpose (the filesystem object store's URL-signing key, say): independent of
   * every other derived value, and changed by a rotation like the rest.
   */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(purpose).digest();
  }

  /** `<shareId>.<mac>`: the share id finds the task, the MAC proves the link was issued here. */
  shareToken(shareId: string): string {
    return `${shareId}.${this.mac('share-link', shareId)}`;
  }

  /** The share id of a genuine token, or undefined. Constant-time comparison of the MAC. */
  verifyShareToken(token: string): string | undefined {
    const dot = token.indexOf('.');
    if (dot <= 0) return undefined;
    const shareId = token.slice(0, dot);
    const expected = Buffer.from(this.shareToken(shareId));
    const presented = Buffer.from(token);
    return expected.length === presented.length && timingSafeEqual(expected, presented) ? shareId : undefined;
  }
}

/** Reads the installation key, creating it on first start (two replicas racing agree on one). */
export async function ensureInstallationKey(
  store: ResourceStore,
  namespace: string,
): Promise<InstallationKey> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await store.get(SecretType, namespace, INSTALLATION_KEY_SECRET);
    const value = existing === undefined ? undefined : secretValue(existing, KEY_FIELD);
    if (value !== undefined) return new InstallationKey(Buffer.from(value, 'base64url'));
    if (existing !== undefined)
      throw new Error(`Secret ${namespace}/${INSTALLATION_KEY_SECRET} has no "${KEY_FIELD}"`);
    try {
      await store.create(SecretType, {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'agentry.dev/installation-key',
        metadata: {
          name: INSTALLATION_KEY_SECRET,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'agentry', 'agentry.dev/component': 'installation-key' },
        },
        data: secretData({ [KEY_FIELD]: randomBytes(32).toString('base64url') }),
      });
    } catch (err) {
      if (!isStoreError(err, 'AlreadyExists'))
        throw new Error('creating the installation key', { cause: err });
    }
  }
  throw new Error(`cannot read or create Secret ${namespace}/${INSTALLATION_KEY_SECRET}`);
}
