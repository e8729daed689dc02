import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as signWith,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { SecretType, secretData, secretValue } from '../crds/index.js';
import type { Secret } from '../crds/index.js';
import { isStoreError } from './store/types.js';
import type { ResourceStore } from './store/types.js';

/**
 * The installation's Ed25519 keys that sign webhook deliveries (docs/api.md#webhooks, the Standard
 * Webhooks asymmetric scheme `v1a`). They live in one Secret of the control-plane namespace, so
 * every API replica and the operator sign and publish with the same keys. Rotation keeps the
 * previous key signing too for a window, so receivers can pick up the new public key at leisure.
 */
export const WEBHOOK_SIGNING_KEYS_SECRET = 'agentry-webhook-signing-keys';
const SECRET_TYPE = 'agentry.dev/webhook-signing-keys';
const KEYS_FIELD = 'keys';
const ATTEMPTS = 5;

export interface PublicKeyInfo {
  keyId: string;
  /** `whpk_` + base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  /** SPKI PEM. */
  publicKeyPem: string;
}

export interface PublicKeyDocument extends PublicKeyInfo {
  algorithm: 'ed25519';
  previous: (PublicKeyInfo & { retiresAt: string })[];
}

/** One key as the Secret stores it; the first entry without `retiresAt` is the current key. */
const StoredKeySchema = z.object({
  keyId: z.string().min(1),
  privateKeyPem: z.string().min(1),
  publicKeyPem: z.string().min(1),
  createdAt: z.iso.datetime(),
  retiresAt: z.iso.datetime().optional(),
});
type StoredKey = z.infer<typeof StoredKeySchema>;
const StoredKeysSchema = z.array(StoredKeySchema);

interface SigningKey extends PublicKeyInfo {
  privateKey: KeyObject;
  retiresAt?: Date;
}

const rawPublicKey = (publicKey: KeyObject): Buffer => {
  const { x } = publicKey.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('not an Ed25519 public key');
  return Buffer.from(x, 'base64url');
};

const keyIdOf = (raw: Buffer): string => `whk_${createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;

function newStoredKey(now: Date): StoredKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    keyId: keyIdOf(rawPublicKey(publicKey)),
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    createdAt: now.toISOString(),
  };
}

/** The public half is derived from the private key, so a hand-edited Secret cannot make them disagree. */
function signingKeyOf(stored: StoredKey): SigningKey {
  const privateKey = createPrivateKey(stored.privateKeyPem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`key ${stored.keyId} is not Ed25519`);
  const publicKey = createPublicKey(privateKey);
  const raw = rawPublicKey(publicKey);
  return {
    keyId: keyIdOf(raw),
    publicKey: `whpk_${raw.toString('base64')}`,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    privateKey,
    ...(stored.retiresAt === undefined ? {} : { retiresAt: new Date(stored.retiresAt) }),
  };
}

const secretName = (namespace: string): string => `${namespace}/${WEBHOOK_SIGNING_KEYS_SECRET}`;

/** Parses the Secret. Errors never carry its content: a JSON parse error quotes the text it read. */
function storedKeysOf(secret: Secret, namespace: string): StoredKey[] {
  const text = secretValue(secret, KEYS_FIELD);
  if (text === undefined) throw new Error(`Secret ${secretName(namespace)} has no "${KEYS_FIELD}"`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`Secret ${secretName(namespace)} does not hold JSON in "${KEYS_FIELD}"`);
  }
  const parsed = StoredKeysSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Secret ${secretName(namespace)} holds invalid signing keys: ${problems.join('; ')}`);
  }
  return parsed.data;
}

const isLive = (key: StoredKey, now: Date): boolean =>
  key.retiresAt === undefined || Date.parse(key.retiresAt) > now.getTime();

function secretOf(namespace: string, keys: StoredKey[], base?: Secret): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: SECRET_TYPE,
    metadata: {
      ...base?.metadata,
      name: WEBHOOK_SIGNING_KEYS_SECRET,
      namespace,
      labels: {
        ...base?.metadata.labels,
        'app.kubernetes.io/managed-by': 'agentry',
        'agentry.dev/component': 'webhook-signing-keys',
      },
    },
    data: secretData({ [KEYS_FIELD]: JSON.stringify(keys) }),
  };
}

/**
 * Writes `keys` where `current` was read: a create when there was no Secret, else a replace
 * at the version read. Resolves false when another writer won (AlreadyExists, Conflict): read again.
 */
async function write(
  store: ResourceStore,
  namespace: string,
  current: Secret | undefined,
  keys: StoredKey[],
): Promise<boolean> {
  try {
    if (current === undefined) await store.create(SecretType, secretOf(namespace, keys));
    else await store.replace(SecretType, secretOf(namespace, keys, current));
    return true;
  } catch (err) {
    if (isStoreError(err, 'AlreadyExists') || isStoreError(err, 'Conflict')) return false;
    throw new Error(`writing Secret ${secretName(namespace)}`, { cause: err });
  }
}

/** The signing keys of the installation, as read at one moment; `load` again to see a rotation. */
export class WebhookSigningKeys {
  private constructor(private readonly keys: readonly SigningKey[]) {}

  /**
   * Reads the keys from the Secret in `namespace`, creating the first key pair on first use (two
   * replicas racing agree on one: AlreadyExists → re-read).
   */
  static async load(store: ResourceStore, namespace: string): Promise<WebhookSigningKeys> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = new Date();
      const secret = await store.get(SecretType, namespace, WEBHOOK_SIGNING_KEYS_SECRET);
      if (secret === undefined) {
        const first = [newStoredKey(now)];
        if (await write(store, namespace, undefined, first)) return WebhookSigningKeys.of(first);
        continue;
      }
      const stored = storedKeysOf(secret, namespace);
      // Housekeeping: a retired key is never used again, so it leaves the Secret; and a Secret
      // left without a current key (edited by hand) gets one rather than failing every delivery.
      const live = stored.filter((key) => isLive(key, now));
      const keys = live.some((key) => key.retiresAt === undefined) ? live : [newStoredKey(now), ...live];
      const unchanged = keys === live && live.length === stored.length;
      if (unchanged || (await write(store, namespace, secret, keys))) return WebhookSigningKeys.of(keys);
    }
    throw new Error(`cannot read or create Secret ${secretName(namespace)}`);
  }

  /**
   * Makes a new current key; the previous current one stays active (signing too) until
   * now + windowMs, then is dropped from the Secret on the next rotate/load. Optimistic concurrency
   * (resourceVersion) with retry.
   */
  static async rotate(
    store: ResourceStore,
    namespace: string,
    options: { windowMs: number; now?: Date },
  ): Promise<WebhookSigningKeys> {
    const now = options.now ?? new Date();
    const retiresAt = new Date(now.getTime() + options.windowMs).toISOString();
    const fresh = newStoredKey(now);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const secret = await store.get(SecretType, namespace, WEBHOOK_SIGNING_KEYS_SECRET);
      const previous = (secret === undefined ? [] : storedKeysOf(secret, namespace))
        .map((key) => (key.retiresAt === undefined ? { ...key, retiresAt } : key))
        .filter((key) => isLive(key, now));
      const keys = [fresh, ...previous];
      if (await write(store, namespace, secret, keys)) return WebhookSigningKeys.of(keys);
    }
    throw new Error(`cannot rotate the keys in Secret ${secretName(namespace)}: too many concurrent writes`);
  }

  private static of(stored: readonly StoredKey[]): WebhookSigningKeys {
    // Current first: the key without retiresAt, then the retiring ones, newest first as stored.
    const ordered = [
      ...stored.filter((key) => key.retiresAt === undefined),
      ...stored.filter((key) => key.retiresAt !== undefined),
    ];
    return new WebhookSigningKeys(ordered.map(signingKeyOf));
  }

  /** The current key (the newest without retiresAt), and the retiring ones still inside their window. */
  private active(now: Date): { current: SigningKey; previous: (SigningKey & { retiresAt: Date })[] } {
    const [current, ...rest] = this.keys;
    if (current === undefined) throw new Error('no webhook signing key');
    const previous = rest.filter(
      (key): key is SigningKey & { retiresAt: Date } =>
        key.retiresAt !== undefined && key.retiresAt.getTime() > now.getTime(),
    );
    return { current, previous };
  }

  /**
   * Standard Webhooks asymmetric scheme: `v1a,<base64 Ed25519 signature of
   * "${id}.${timestamp}.${body}">` for every active key (current first), space separated.
   */
  sign(id: string, timestamp: number, body: string, now: Date = new Date()): string {
    const { current, previous } = this.active(now);
    const data = Buffer.from(`${id}.${timestamp}.${body}`, 'utf8');
    return [current, ...previous]
      .map((key) => `v1a,${signWith(null, data, key.privateKey).toString('base64')}`)
      .join(' ');
  }

  /** GET /v1/webhooks/public_key: the current key, and previous keys still active. */
  publicKeyDocument(now: Date = new Date()): PublicKeyDocument {
    const { current, previous } = this.active(now);
    return {
      keyId: current.keyId,
      algorithm: 'ed25519',
      publicKey: current.publicKey,
      publicKeyPem: current.publicKeyPem,
      previous: previous.map((key) => ({
        keyId: key.keyId,
        publicKey: key.publicKey,
        publicKeyPem: key.publicKeyPem,
        retiresAt: key.retiresAt.toISOString(),
      })),
    };
  }
}
