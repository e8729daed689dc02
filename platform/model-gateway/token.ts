import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { InstallationKey } from '../installation-key.js';

/**
 * The credential a prompt's processes hold instead of a provider key (docs/model-gateway.md): the
 * operator issues one per dispatched prompt; the model gateway (provider calls) and the egress
 * proxy (Proxy-Authorization) accept it. Stateless, signed with a key derived from the installation
 * key, so every API and proxy replica checks it without a lookup; it also stops working the moment
 * its prompt ends, because both check that the prompt is still running.
 */
export const PromptTokenClaimsSchema = z.object({
  /** The organization's namespace, where the Task and its Secrets are (its Organization is found by it). */
  namespace: z.string().min(1),
  /** The Task's name. */
  task: z.string().min(1),
  /** The prompt's id (spec.prompts[].id). */
  prompt: z.string().min(1),
  /** The executor the prompt runs: its definition says which Secret holds each provider's key. */
  executor: z.string().min(1),
  /** The workspace (AgentComputer name): its egress policy applies. */
  workspace: z.string().min(1),
  /** Expiry, seconds since the epoch. */
  exp: z.number().int().positive(),
});
export type PromptTokenClaims = z.infer<typeof PromptTokenClaimsSchema>;

const PREFIX = 'agp1';
const PURPOSE = 'prompt-token';

const macOf = (key: Buffer, payload: string): string =>
  createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest('base64url');

/** Issues and checks prompt tokens with one installation's key. */
export class PromptTokens {
  private readonly key: Buffer;

  constructor(installationKey: InstallationKey) {
    this.key = installationKey.derive(PURPOSE);
  }

  /** `agp1.<claims, base64url JSON>.<HMAC-SHA256, base64url>`. */
  issue(claims: PromptTokenClaims): string {
    const payload = Buffer.from(JSON.stringify(PromptTokenClaimsSchema.parse(claims))).toString('base64url');
    return `${PREFIX}.${payload}.${macOf(this.key, payload)}`;
  }

  /**
   * The claims of a genuine, unexpired token, or undefined (forged, altered, expired or not a
   * token at all: the caller answers each the same way).
   */
  verify(token: string, nowMs: number = Date.now()): PromptTokenClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX) return undefined;
    const [, payload = '', mac = ''] = parts;
    const expected = Buffer.from(macOf(this.key, payload));
    const presented = Buffer.from(mac);
    if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const claims = PromptTokenClaimsSchema.safeParse(json);
    if (!claims.success || claims.data.exp * 1000 <= nowMs) return undefined;
    return claims.data;
  }
}

/** A token's lifetime: the prompt's time limit plus a margin for the last call's answer. */
export const promptTokenExpiry = (nowMs: number, promptTimeoutSeconds: number): number =>
  Math.ceil(nowMs / 1000) + promptTimeoutSeconds + 300;
