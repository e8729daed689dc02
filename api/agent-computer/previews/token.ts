import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { InstallationKey } from '../../../platform/installation-key.js';

/** Separates the preview signing key from every other value derived from the installation key. */
const PREVIEW_KEY_PURPOSE = 'preview-url';
const VERSION = 'v1';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
/** 16 base32 characters: 80 random bits. */
const ID_LENGTH = 16;
/** 40 base32 characters: 200 bits of the HMAC; id + MAC = 56 characters, a valid DNS label. */
const MAC_LENGTH = 40;
const TOKEN = /^[a-z2-7]{56}$/;

/** RFC 4648 base32 in lowercase without padding: letters and digits only, so a token is a DNS label. */
function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += ALPHABET.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) text += ALPHABET.charAt((value << (5 - bits)) & 31);
  return text;
}

/** What a preview token is bound to: moving any of it to another workspace, port or expiry breaks the MAC. */
export interface PreviewClaim {
  namespace: string;
  workspace: string;
  previewId: string;
  port: number;
  expiresAt: string;
}

/** A new preview id: 80 random bits. */
export const newPreviewId = (): string => base32(randomBytes(10)).slice(0, ID_LENGTH);

/**
 * Preview URL tokens: `<preview id><MAC>` in lowercase base32 (56 characters), usable as a path
 * segment and as a DNS label. The id finds the workspace; the MAC (a key derived from the
 * installation key) proves the API issued the token for that workspace, port and expiry.
 */
export class PreviewTokens {
  private readonly secret: Buffer;

  constructor(installationKey: InstallationKey) {
    this.secret = installationKey.derive(PREVIEW_KEY_PURPOSE);
  }

  sign(claim: PreviewClaim): string {
    return `${claim.previewId}${this.mac(claim)}`;
  }

  /** The preview id a well-formed token names (the MAC is checked by `verify` once its claim is known). */
  previewIdOf(token: string): string | undefined {
    return TOKEN.test(token) ? token.slice(0, ID_LENGTH) : undefined;
  }

  /** Whether `token` was signed here for exactly this claim (constant-time). */
  verify(token: string, claim: PreviewClaim): boolean {
    const expected = Buffer.from(this.sign(claim));
    const presented = Buffer.from(token);
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }

  private mac(claim: PreviewClaim): string {
    const subject = [VERSION, claim.namespace, claim.workspace, claim.previewId, claim.port, claim.expiresAt];
    const digest = createHmac('sha256', this.secret).update(subject.join('\n')).digest();
    return base32(digest).slice(0, MAC_LENGTH);
  }
}
