// A webhook receiver for the delivery tests: node:http on loopback, recording when each request
// arrived and answering from a script (status, headers, delays). Signatures are checked with
// verifyDelivery of test/support/webhook-receiver.ts.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer this much later (0: at once); a request the client drops meanwhile is never answered. */
  delayMs?: number;
}

export class Receiver {
  readonly received: Received[] = [];
  answer: (request: Received, index: number) => Answer = () => ({ status: 200 });
  private server: Server | undefined;
  private port = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Starts on the port it had before, if any: the registered URL stays valid across a stop. */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          headers: req.headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(request);
        const answer = this.answer(request, this.received.length - 1);
        const send = (): void => {
          if (!res.destroyed) res.writeHead(answer.status, answer.headers).end('{"ok":true}');
        };
        if ((answer.delayMs ?? 0) === 0) {
          send();
          return;
        }
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          send();
        }, answer.delayMs);
        this.timers.add(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address !== null && typeof address === 'object') this.port = address.port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  ids(): string[] {
    return this.received.map((request) => String(request.headers['webhook-id']));
  }
}
