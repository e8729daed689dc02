import type { ResourceStore } from '../../platform/store/types.js';
import { WebhookSigningKeys } from '../../platform/webhook-signing.js';

/** How long the API serves the keys it read before reading the Secret again. */
export const SIGNING_KEYS_TTL_MS = 30_000;

/**
 * The installation's signing keys as last read, read again after `ttlMs`: a rotation made with
 * `agentry webhook-keys rotate` (or by another replica) shows up without a restart, while a busy
 * public_key endpoint costs one Secret read per interval. Concurrent callers share one read, and a
 * failed read is not cached, so the next request tries again.
 */
export class SigningKeysCache {
  private cached: { keys: Promise<WebhookSigningKeys>; readAt: number } | undefined;

  constructor(
    private readonly store: ResourceStore,
    private readonly namespace: string,
    private readonly options: { ttlMs?: number; now?: () => Date } = {},
  ) {}

  get(): Promise<WebhookSigningKeys> {
    const now = (this.options.now?.() ?? new Date()).getTime();
    const ttlMs = this.options.ttlMs ?? SIGNING_KEYS_TTL_MS;
    if (this.cached !== undefined && now - this.cached.readAt < ttlMs) return this.cached.keys;
    const entry = { keys: WebhookSigningKeys.load(this.store, this.namespace), readAt: now };
    this.cached = entry;
    entry.keys.catch(() => {
      if (this.cached === entry) this.cached = undefined;
    });
    return entry.keys;
  }
}
