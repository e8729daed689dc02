import type { Secret } from '../../crds/index.js';
import { organizationNamespace } from '../../crds/index.js';
import { ApiError } from '../errors.js';
import type { ReadModel } from '../read-model.js';
import type { SessionCookies } from '../web/session-cookie.js';
import { revokeSessions, sessionsRevokedAt } from '../web/session-revocation.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { apiKeyIdOfHash, apiKeySecretName, cachedApiKeyReader, checkApiKey, hashApiKey } from './api-keys.js';
import type { ApiKeyRecord } from './api-keys.js';
import type { Principal } from './principal.js';

/** A key resolved to its caller, with what a session cookie binds to (its Secret's uid) and its expiry. */
export interface ResolvedKey {
  principal: Principal;
  keyUid: string;
  keyExpiresAt: string | undefined;
}

export interface KeyResolverOptions {
  readModel: ReadModel;
  /** Where sign-out records that a key's sessions are over (an annotation on its Secret). */
  store: ResourceStore;
  controlNamespace: string;
  now?: () => Date;
}

/** Resolves API keys, and session cookies naming them, to principals: read afresh on every request. */
export interface KeyResolver {
  now(): Date;
  /** The caller of a presented key; a wrong, revoked or expired key (or a deleted organization) is a 401. */
  byKey(key: string): ResolvedKey;
  /** The caller of a session cookie, or undefined when it is forged, expired, or its key is gone or expired. */
  bySession(cookies: SessionCookies, value: string): (ResolvedKey & { sessionExpiresAt: Date }) | undefined;
  /** Sign-out: ends every session of the cookie's key that began until now; a cookie that is no session ends nothing. */
  endSessions(cookies: SessionCookies, value: string): Promise<void>;
}

const invalidKey = (): ApiError => new ApiError('invalid_api_key', 'The API key is invalid');

export function keyResolver(options: KeyResolverOptions): KeyResolver {
  const now = options.now ?? (() => new Date());
  const readKey = cachedApiKeyReader();
  const secretOf = (keyId: string): Secret | undefined =>
    options.readModel.apiKeys.get(options.controlNamespace, apiKeySecretName(keyId));

  /** The caller of a checked key, unless its organization is gone or going. */
  function resolved(keyId: string, secret: Secret, key: ApiKeyRecord): ResolvedKey | undefined {
    const organization = options.readModel.organizations.get(undefined, key.organization);
    if (organization === undefined || organization.metadata.deletionTimestamp !== undefined) return undefined;
    return {
      principal: {
        keyId,
        user: key.user,
        scopes: key.scopes,
        organization,
        namespace: organizationNamespace(organization),
      },
      keyUid: secret.metadata.uid ?? '',
      keyExpiresAt: key.expiresAt,
    };
  }

  /** The cookie's claim and its key's Secret, when the cookie is genuine, unexpired and not signed out. */
  function verifiedSession(cookies: SessionCookies, value: string, at: Date) {
    const claim = cookies.read(value, at);
    const secret = claim === undefined ? undefined : secretOf(claim.keyId);
    if (claim === undefined || secret === undefined) return undefined;
    if (!cookies.verify(value, claim, secret.metadata.uid ?? '')) return undefined;
    const revokedAt = sessionsRevokedAt(secret);
    if (revokedAt !== undefined && claim.issuedAt.getTime() <= revokedAt) return undefined;
    return { claim, secret };
  }

  return {
    now,
    async endSessions(cookies, value) {
      const at = now();
      const session = verifiedSession(cookies, value, at);
      if (session === undefined) return;
      await revokeSessions(options.store, session.secret, at, (written) => {
        options.readModel.apiKeys.observe(written);
      });
    },
    byKey(key) {
      const hash = hashApiKey(key);
      const keyId = apiKeyIdOfHash(hash);
      const secret = secretOf(keyId);
      const check = checkApiKey(hash, secret, now(), readKey);
      if (!check.ok) {
        throw check.reason === 'expired'
          ? new ApiError('invalid_api_key', 'The API key has expired')
          : invalidKey();
      }
      const found = secret === undefined ? undefined : resolved(keyId, secret, check.key);
      if (found === undefined) throw invalidKey();
      return found;
    },
    bySession(cookies, value) {
      const at = now();
      const session = verifiedSession(cookies, value, at);
      if (session === undefined) return undefined;
      const { claim, secret } = session;
      const record = readKey(secret)?.record;
      if (record === undefined) return undefined;
      if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= at.getTime()) return undefined;
      const found = resolved(claim.keyId, secret, record);
      return found === undefined ? undefined : { ...found, sessionExpiresAt: claim.expiresAt };
    },
  };
}
