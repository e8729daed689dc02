import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { SecretType, secretData, secretValue } from '../../crds/index.js';
import type { Secret } from '../../crds/index.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { ScopeSchema } from './scopes.js';
import type { Scope } from './scopes.js';
import { VersionedCache } from '../versioned-cache.js';

/**
 * API keys are Secrets in the control-plane namespace holding only a SHA-256 of the key. The
 * Secret's name carries a prefix of that hash, so a request finds its key with one lookup, and
 * the key itself can be any high-entropy string (AGENTRY_API_KEY lets scripts choose one).
 */
export const API_KEY_LABELS = {
  component: 'agentry.dev/component',
  organization: 'agentry.dev/organization',
  user: 'agentry.dev/user',
} as const;
export const API_KEY_COMPONENT = 'api-key';
const SECRET_TYPE = 'agentry.dev/api-key';
const KEY_PREFIX = 'agk_';

// The one-shot hash: every authenticated request hashes its key, and a Hash object costs more than the digest.
export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

/** The public id of a key whose hashApiKey is `hash`: a prefix of it, safe to print and log. */
export const apiKeyIdOfHash = (hash: string): string => hash.slice(0, 16);

/** The public id of a key: a hash prefix, safe to print and log. */
export const apiKeyId = (key: string): string => apiKeyIdOfHash(hashApiKey(key));

export const apiKeySecretName = (id: string): string => `agentry-key-${id}`;

export const generateApiKey = (): string => KEY_PREFIX + randomBytes(32).toString('base64url');

export interface ApiKeyRecord {
  id: string;
  name: string;
  organization: string;
  user: string;
  scopes: Scope[];
  createdAt: string | undefined;
  expiresAt: string | undefined;
}

const StoredKeySchema = z.object({
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  name: z.string(),
  organization: z.string().min(1),
  user: z.string().min(1),
  scopes: z.string().transform((value, ctx) => {
    const parsed = z.array(ScopeSchema).safeParse(value.split(',').filter((scope) => scope !== ''));
    if (!parsed.success) ctx.addIssue({ code: 'custom', message: `unknown scope in "${value}"` });
    return parsed.data ?? [];
  }),
  expiresAt: z.iso.datetime().optional(),
});

function readStoredKey(secret: Secret): (z.infer<typeof StoredKeySchema> & { id: string }) | undefined {
  const fields = ['hash', 'name', 'organization', 'user', 'scopes', 'expiresAt'] as const;
  const raw = Object.fromEntries(fields.map((field) => [field, secretValue(secret, field)]));
  const parsed = StoredKeySchema.safeParse(raw);
  if (!parsed.success) return undefined;
  return { ...parsed.data, id: secret.metadata.name.replace(/^agentry-key-/, '') };
}

/** A key's Secret as read once: the stored hash and the record it describes. */
export interface StoredApiKey {
  hash: string;
  record: ApiKeyRecord;
}

export function readApiKey(secret: Secret): StoredApiKey | undefined {
  const stored = readStoredKey(secret);
  if (stored === undefined) return undefined;
  return {
    hash: stored.hash,
    record: {
      id: stored.id,
      name: stored.name,
      organization: stored.organization,
      user: stored.user,
      scopes: stored.scopes,
      createdAt: secret.metadata.creationTimestamp,
      expiresAt: stored.expiresAt,
    },
  };
}

export const apiKeyRecord = (secret: Secret): ApiKeyRecord | undefined => readApiKey(secret)?.record;

/**
 * readApiKey for every request: the Secrets come from the read model's cache, so each version of
 * one is parsed once (keyed by uid and resourceVersion, see VersionedCache).
 */
export function cachedApiKeyReader(capacity = 1024): (secret: Secret) => StoredApiKey | undefined {
  const parsed = new VersionedCache<StoredApiKey | undefined>(capacity);
  return (secret) => parsed.derive(secret, readApiKey);
}

export interface IssueApiKeyInput {
  organization: string;
  user: string;
  scopes: Scope[];
  name?: string;
  expiresAt?: string;
  /** Use this key instead of generating one. */
  key?: string;
}

/** Stores a new key (only its hash) and returns the key: the one time it is ever shown. */
export async function issueApiKey(
  store: ResourceStore,
  namespace: string,
  input: IssueApiKeyInput,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = input.key ?? generateApiKey();
  const id = apiKeyId(key);
  const values: Record<string, string> = {
    hash: hashApiKey(key),
    name: input.name ?? '',
    organization: input.organization,
    user: input.user,
    scopes: input.scopes.join(','),
    ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
  };
  const secret = await store.create(SecretType, {
    apiVersion: 'v1',
    kind: 'Secret',
    type: SECRET_TYPE,
    metadata: {
      name: apiKeySecretName(id),
      namespace,
      labels: {
        [API_KEY_LABELS.component]: API_KEY_COMPONENT,
        [API_KEY_LABELS.organization]: input.organization,
        [API_KEY_LABELS.user]: labelSafe(input.user),
      },
    },
    data: secretData(values),
  });
  const record = apiKeyRecord(secret);
  if (record === undefined) throw new Error(`key ${id} was stored unreadable`);
  return { key, record };
}

/** Label values are at most 63 characters of [A-Za-z0-9-_.]; the data field keeps the real user. */
const labelSafe = (value: string): string =>
  value
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'unknown';

export async function listApiKeys(
  store: ResourceStore,
  namespace: string,
  filter: { organization?: string } = {},
): Promise<ApiKeyRecord[]> {
  const selector = [`${API_KEY_LABELS.component}=${API_KEY_COMPONENT}`];
  if (filter.organization !== undefined)
    selector.push(`${API_KEY_LABELS.organization}=${filter.organization}`);
  const { items } = await store.list(SecretType, { namespace, labelSelector: selector.join(',') });
  return items.flatMap((secret) => apiKeyRecord(secret) ?? []);
}

/** Deletes a key; true when it existed. */
export async function revokeApiKey(store: ResourceStore, namespace: string, id: string): Promise<boolean> {
  if (!/^[0-9a-f]{16}$/.test(id)) return false;
  try {
    await store.delete(SecretType, namespace, apiKeySecretName(id));
    return true;
  } catch (err) {
    if (isStoreError(err, 'NotFound')) return false;
    throw err;
  }
}

export type KeyCheck = { ok: true; key: ApiKeyRecord } | { ok: false; reason: 'unknown' | 'expired' };

/**
 * Checks a presented key, given as its hashApiKey (the caller has it already: the key's id is a
 * prefix of it), against its stored Secret: constant-time hash compare, then expiry.
 */
export function checkApiKey(
  presentedHash: string,
  secret: Secret | undefined,
  now: Date,
  read: (secret: Secret) => StoredApiKey | undefined = readApiKey,
): KeyCheck {
  const stored = secret === undefined ? undefined : read(secret);
  const expected = Buffer.from(stored?.hash ?? '0'.repeat(64), 'hex');
  const actual = Buffer.from(presentedHash, 'hex');
  const matches = actual.length === expected.length && timingSafeEqual(expected, actual);
  if (!matches || stored === undefined) return { ok: false, reason: 'unknown' };
  const { record } = stored;
  if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now.getTime()) {
    return { ok: false, reason: 'expired' };
  }
  return { ok: true, key: record };
}
