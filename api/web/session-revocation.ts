import { SecretType } from '../../crds/index.js';
import type { Secret } from '../../crds/index.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { updateWithRetry } from '../optimistic-update.js';

/**
 * On an API key's Secret: when its holder last signed out of the web pages (RFC 3339, ms). Every
 * session of that key that began before is over, in every browser and on every API replica (each
 * reads the Secret from its cache), so a copied cookie dies with the sign-out, not 12 h later.
 */
export const SESSIONS_REVOKED_AT_ANNOTATION = 'agentry.dev/sessions-revoked-at';

/** When the key's sessions were last revoked, in ms; undefined when never (or unreadable). */
export function sessionsRevokedAt(secret: Secret): number | undefined {
  const value = secret.metadata.annotations?.[SESSIONS_REVOKED_AT_ANNOTATION];
  const at = value === undefined ? Number.NaN : Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/** Ends every session of the key whose Secret this is that began at or before `at`. */
export async function revokeSessions(
  store: ResourceStore,
  secret: Secret,
  at: Date,
  observe: (written: Secret) => void,
): Promise<void> {
  const { namespace, name } = secret.metadata;
  const written = await updateWithRetry(store, SecretType, namespace, name, (current) => {
    if ((sessionsRevokedAt(current) ?? -1) >= at.getTime()) return undefined;
    const annotations = {
      ...current.metadata.annotations,
      [SESSIONS_REVOKED_AT_ANNOTATION]: at.toISOString(),
    };
    return { ...current, metadata: { ...current.metadata, annotations } };
  });
  if (written !== undefined) observe(written);
}
