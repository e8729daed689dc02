import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { InstallationKey } from '../../platform/installation-key.js';

/** The cookie of a web-page session (docs/api.md#web-pages). */
export const SESSION_COOKIE = 'agentry_session';

/** Separates the derived signing key from every other value derived from the installation key. */
const SESSION_KEY_PURPOSE = 'ui-session-cookie';
const VERSION = 'v2';
const KEY_ID = /^[0-9a-f]{16}$/;
const EXPIRY = /^\d{1,12}$/;
const ISSUED = /^\d{1,15}$/;

/** What a genuine cookie names: an API key (by its public id), when the session began and when it ends. */
export interface SessionClaim {
  keyId: string;
  /** Milliseconds: signing out ends every session of the key that began before (session-revocation.ts). */
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * The session cookie's value: `v2.<key id>.<issued ms>.<expiry seconds>.<mac>`. It holds no key, only the
 * key's public id; the MAC (a key derived from the installation key) also covers the uid of the
 * key's Secret, so a key revoked and issued again under the same id does not revive old sessions.
 * Every request re-reads the key, so revoking or expiring it ends its sessions at once. (v1 cookies,
 * which had no issue time, are no longer accepted: their holders sign in again.)
 */
export class SessionCookies {
  private readonly secret: Buffer;

  constructor(installationKey: InstallationKey) {
    this.secret = installationKey.derive(SESSION_KEY_PURPOSE);
  }

  private mac(keyId: string, keyUid: string, issued: string, expirySeconds: string): string {
    return createHmac('sha256', this.secret)
      .update(`${VERSION}\n${keyId}\n${keyUid}\n${issued}\n${expirySeconds}`)
      .digest('base64url');
  }

  /** A cookie value for the key whose Secret has `keyUid`, issued now, valid until `expiresAt` (whole seconds). */
  sign(keyId: string, keyUid: string, session: { issuedAt: Date; expiresAt: Date }): string {
    const issued = String(session.issuedAt.getTime());
    const expiry = String(Math.floor(session.expiresAt.getTime() / 1000));
    return [VERSION, keyId, issued, expiry, this.mac(keyId, keyUid, issued, expiry)].join('.');
  }

  /** The claim of a well-formed, unexpired value; the MAC is checked by `verify` once the key's uid is known. */
  read(value: string, now: Date): SessionClaim | undefined {
    const [version, keyId, issued, expiry, mac, ...rest] = value.split('.');
    if (version !== VERSION || rest.length > 0 || mac === undefined) return undefined;
    if (keyId === undefined || !KEY_ID.test(keyId) || issued === undefined || !ISSUED.test(issued))
      return undefined;
    if (expiry === undefined || !EXPIRY.test(expiry)) return undefined;
    const expiresAt = new Date(Number(expiry) * 1000);
    const issuedAt = new Date(Number(issued));
    return expiresAt.getTime() > now.getTime() ? { keyId, issuedAt, expiresAt } : undefined;
  }

  /** Whether `value` was signed here for this claim and the key's current Secret (constant-time). */
  verify(value: string, claim: SessionClaim, keyUid: string): boolean {
    const expected = Buffer.from(this.sign(claim.keyId, keyUid, claim));
    const presented = Buffer.from(value);
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }
}

/** The session cookie's value from a request's Cookie header, if it carries one. */
export function presentedSessionCookie(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = pair.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/**
 * `Set-Cookie` of a session: HttpOnly (page scripts never see it), SameSite=Strict (no other site's
 * request carries it), Secure when the server is reached over https.
 */
export function sessionCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${value}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

/** `Set-Cookie` that makes the browser drop the session cookie (sign-out). */
export const expiredSessionCookieHeader = (secure: boolean): string => sessionCookieHeader('', 0, secure);
