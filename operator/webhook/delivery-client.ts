import { setMaxListeners } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { AGENTRY_VERSION } from '../../platform/version.js';
import { TargetRefusedError, pinnedLookup, resolveWebhookTarget } from '../../platform/outbound-targets.js';
import type { HostLookup } from '../../platform/outbound-targets.js';

/** docs/api.md#webhooks: 15 s without an answer is a failure. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** What is read of an answer before it is discarded: receivers have nothing to tell us in a body. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
export const USER_AGENT = `Agentry-Webhooks/${AGENTRY_VERSION}`;

/** What one HTTP attempt came to. `error` is short and never holds the secret. */
export type AttemptOutcome =
  | { kind: 'success'; status: number }
  | { kind: 'gone'; status: number }
  | { kind: 'failure'; error: string; status?: number; retryAfterMs?: number };

export interface Attempt {
  url: string;
  /** The installation allows private targets, or the webhook's organization does. */
  allowPrivate: boolean;
  /** The outbox entry's id: the `webhook-id`, the same on every retry. */
  webhookId: string;
  /** The JSON body, sent and signed exactly as given. */
  body: string;
  /** The `webhook-signature` header value of `${webhookId}.${timestamp}.${body}`. */
  sign: (id: string, timestamp: number, body: string) => string;
  /** Sent as X-Webhook-Secret when the webhook has one. */
  secret?: string | undefined;
}

export interface DeliveryClientOptions {
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Replaces DNS (tests). */
  lookup?: HostLookup;
  now?: () => Date;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

/** Retry-After in delta-seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}

/** Reads at most `limit` bytes of the answer and discards them; settles when done or cut off. */
function drain(response: IncomingMessage, limit: number): Promise<void> {
  return new Promise((resolve) => {
    let read = 0;
    response.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > limit) {
        response.destroy();
        resolve();
      }
    });
    response.on('end', resolve);
    response.on('close', resolve);
    response.on('error', () => {
      resolve();
    });
  });
}

const formatMs = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** A network error in a few words (Node's errors may come from another realm: no instanceof). */
function describeNetworkError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return 'the request failed';
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  // Connecting to several addresses (autoSelectFamily) fails with an AggregateError of each.
  if (Array.isArray(errors) && errors.length > 0) return describeNetworkError(errors[0]);
  const text = typeof message === 'string' ? message.slice(0, 300) : '';
  if (typeof code !== 'string') return text === '' ? 'the request failed' : text;
  return text.includes(code) ? text : `${code}${text === '' ? '' : `: ${text}`}`;
}

/**
 * One delivery attempt (docs/api.md#webhooks): checks the target again (DNS can change, and so can the
 * organization's policy), then POSTs to the checked address with the Standard Webhooks headers. 2xx
 * is success, 410 is gone, anything else (3xx included: redirects are never followed, they could
 * lead anywhere) or no answer within the timeout is a failure.
 */
export class DeliveryClient {
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly now: () => Date;

  constructor(private readonly options: DeliveryClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.now = options.now ?? (() => new Date());
  }

  /** Rejects only when `signal` aborts (shutdown): then nothing is known and nothing is recorded. */
  async deliver(attempt: Attempt, signal: AbortSignal): Promise<AttemptOutcome> {
    let target;
    try {
      target = await resolveWebhookTarget(
        attempt.url,
        { allowPrivate: attempt.allowPrivate },
        this.options.lookup === undefined ? {} : { lookup: this.options.lookup },
      );
    } catch (err) {
      if (err instanceof TargetRefusedError) return { kind: 'failure', error: err.message };
      throw err;
    }
    const timestamp = Math.floor(this.now().getTime() / 1000);
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(attempt.body),
      'user-agent': USER_AGENT,
      'webhook-id': attempt.webhookId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': attempt.sign(attempt.webhookId, timestamp, attempt.body),
      ...(attempt.secret === undefined ? {} : { 'x-webhook-secret': attempt.secret }),
    };
    let answer: Answer;
    // The controller's one shutdown signal is shared by every attempt in flight (a listener each):
    // more than Node's default ten is expected, not a leak.
    setMaxListeners(0, signal);
    try {
      answer = await this.post(target, headers, attempt.body, signal);
    } catch (err) {
      if (signal.aborted) throw new Error('webhook delivery aborted', { cause: err });
      return { kind: 'failure', error: describeNetworkError(err) };
    }
    return this.outcomeOf(answer);
  }

  private outcomeOf(answer: Answer): AttemptOutcome {
    const { status } = answer;
    if (status >= 200 && status < 300) return { kind: 'success', status };
    if (status === 410) return { kind: 'gone', status };
    const retryAfterMs = parseRetryAfter(answer.retryAfter, this.now());
    const error =
      status >= 300 && status < 400
        ? `the target answered HTTP ${status} (redirects are not followed)`
        : `the target answered HTTP ${status}`;
    return { kind: 'failure', error, status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }

  private post(
    target: { url: URL; address: string; family: 4 | 6 },
    headers: OutgoingHttpHeaders,
    body: string,
    signal: AbortSignal,
  ): Promise<Answer> {
    const { url } = target;
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve, reject) => {
      const request = send({
        method: 'POST',
        protocol: url.protocol,
        hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers,
        // A fresh connection per attempt: a pooled one could lead to an address checked for another attempt.
        agent: false,
        lookup: pinnedLookup(target.address, target.family),
        ...(https && isIP(hostname) === 0 ? { servername: hostname } : {}),
        signal,
      });
      const timer = setTimeout(() => {
        request.destroy(new Error(`no answer within ${formatMs(this.timeoutMs)}`));
      }, this.timeoutMs);
      request.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      request.on('response', (response) => {
        const retryAfter = response.headers['retry-after'];
        void drain(response, this.maxResponseBytes).then(() => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, retryAfter });
        });
      });
      request.end(body);
    });
  }
}
