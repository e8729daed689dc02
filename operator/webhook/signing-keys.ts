import type { Logger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { WebhookSigningKeys } from '../../platform/webhook-signing.js';

/** Keys are read again at most this often, so a rotation is picked up without a restart. */
export const SIGNING_KEYS_RELOAD_MS = 30_000;

/** Signs `${id}.${timestamp}.${body}`: the `webhook-signature` header value. */
export interface Signer {
  sign(id: string, timestamp: number, body: string): string;
}

export type SignerLoader = () => Promise<Signer>;

export const storeSignerLoader =
  (store: ResourceStore, namespace: string): SignerLoader =>
  () =>
    WebhookSigningKeys.load(store, namespace);

/**
 * The installation's signing keys as last read. Concurrent callers share one read. A failed read
 * keeps signing with the keys read before (a rotation is a minute late rather than every delivery
 * failing); with nothing read yet it throws, and the reconcile retries with back-off.
 */
export class SigningKeys {
  private current: Signer | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<Signer> | undefined;

  constructor(
    private readonly load: SignerLoader,
    private readonly logger: Logger,
    private readonly options: { reloadMs?: number; now?: () => Date } = {},
  ) {}

  get(): Promise<Signer> {
    const now = (this.options.now?.() ?? new Date()).getTime();
    const current = this.current;
    if (current !== undefined && now - this.readAt < (this.options.reloadMs ?? SIGNING_KEYS_RELOAD_MS))
      return Promise.resolve(current);
    this.reading ??= this.read(now).finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(now: number): Promise<Signer> {
    try {
      const keys = await this.load();
      this.current = keys;
      this.readAt = now;
      return keys;
    } catch (err) {
      if (this.current === undefined) throw new Error('reading the webhook signing keys', { cause: err });
      this.logger.warn({ err }, 'cannot read the webhook signing keys; signing with the ones read before');
      this.readAt = now;
      return this.current;
    }
  }
}
