// Receivers: loopback servers answering 200 at once, recording each request by webhook-id.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { closeServer, listenOnLoopback } from '../support/http.js';

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

export class Receiver {
  recorder = new Recorder();
  private server: Server | undefined;
  private port = 0;

  constructor(readonly webhook: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = performance.now();
        this.recorder.record(this.webhook, req.headers, Buffer.concat(chunks).toString('utf8'), at);
        res.writeHead(200).end();
      });
    });
    this.port = await listenOnLoopback(server);
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await closeServer(server);
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
