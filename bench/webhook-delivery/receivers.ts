// Receivers: loopback servers answering 200 at once, recording each request by webhook-id.
import type { IncomingHttpHeaders } from 'node:http';
import { WebhookReceiver } from '../../test/support/webhook-receiver.js';

export interface Arrival {
  /** performance.now() once the whole request was read. */
  at: number;
  webhook: string;
}

export interface Captured {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receivers got during one phase. */
export class Recorder {
  readonly arrivals = new Map<string, Arrival[]>();
  /** The first request of each webhook-id: what the floor replays. */
  readonly requests = new Map<string, Captured>();
  count = 0;
  withoutId = 0;

  record(webhook: string, headers: IncomingHttpHeaders, body: string, at: number): void {
    this.count++;
    const id = headers['webhook-id'];
    if (typeof id !== 'string') {
      this.withoutId++;
      return;
    }
    const list = this.arrivals.get(id);
    if (list === undefined) {
      this.arrivals.set(id, [{ at, webhook }]);
      this.requests.set(id, { headers, body });
    } else list.push({ at, webhook });
  }
}

/** One webhook's receiver: test/support's, recording each request by webhook-id as it ends. */
export class Receiver {
  recorder = new Recorder();
  private readonly server = new WebhookReceiver();

  constructor(readonly webhook: string) {
    this.server.respond = ({ headers, rawBody }) => {
      this.recorder.record(webhook, headers, rawBody, performance.now());
      // The recorder keeps what the bench needs; the receiver's own list would only grow.
      this.server.received.length = 0;
      return 200;
    };
  }

  get url(): string {
    return this.server.url;
  }

  start(): Promise<void> {
    return this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}

/** All receivers' recorders as one (each receiver's recorder is its own). */
export function mergedRecorder(receivers: readonly Receiver[]): Recorder {
  const merged = new Recorder();
  for (const receiver of receivers) {
    const r = receiver.recorder;
    merged.count += r.count;
    merged.withoutId += r.withoutId;
    for (const [id, list] of r.arrivals)
      merged.arrivals.set(id, [...(merged.arrivals.get(id) ?? []), ...list]);
    for (const [id, request] of r.requests) if (!merged.requests.has(id)) merged.requests.set(id, request);
  }
  return merged;
}
