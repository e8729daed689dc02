import { createPublicKey, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';

/** One delivery as the receiver got it: raw body bytes and headers, nothing parsed by our code. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  answered: number;
}

/**
 * A webhook receiver on loopback, as a client would run one. `respond` decides each answer (200 by
 * default); `received` keeps every request, failed ones included.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  respond: (delivery: Omit<ReceivedDelivery, 'answered'>) => number = () => 200;
  private server: Server | undefined;
  private port = 0;

  /** `host`: where it listens; loopback unless a test's pods must reach it (the real node's bridge). */
  constructor(private readonly host = '127.0.0.1') {}

  get url(): string {
    return `http://${this.host}:${this.port}/hook`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const delivery = { headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8') };
        const status = this.respond(delivery);
        this.received.push({ ...delivery, answered: status });
        res.writeHead(status).end();
      });
    });
    // The same port across a stop and start, so the registered URL stays valid ("receiver down, then up").
    await new Promise<void>((resolve) => server.listen(this.port, this.host, resolve));
    const address = server.address();
    if (address !== null && typeof address === 'object') this.port = address.port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  }

  /** Deliveries answered 2xx, parsed. */
  accepted(): {
    id: string;
    event: string;
    taskId: string;
    body: Record<string, unknown>;
    delivery: ReceivedDelivery;
  }[] {
    return this.received
      .filter((d) => d.answered >= 200 && d.answered < 300)
      .map((delivery) => {
        const body = JSON.parse(delivery.rawBody) as Record<string, unknown>;
        return {
          id: String(body.id),
          event: String(body.event),
          taskId: String(body.taskId),
          body,
          delivery,
        };
      });
  }
}

/**
 * Verifies a delivery the way the Standard Webhooks asymmetric scheme says, with Node's crypto and
 * the PEM from GET /v1/webhooks/public_key: independent of the code that signs. True when any
 * `v1a,` signature in the header verifies over `${webhook-id}.${webhook-timestamp}.${body}`.
 */
export function verifyDelivery(
  delivery: { headers: IncomingHttpHeaders; rawBody: string },
  publicKeyPem: string,
): boolean {
  const id = delivery.headers['webhook-id'];
  const timestamp = delivery.headers['webhook-timestamp'];
  const signatures = delivery.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  const key = createPublicKey(publicKeyPem);
  const signed = Buffer.from(`${id}.${timestamp}.${delivery.rawBody}`);
  return signatures
    .split(' ')
    .filter((part) => part.startsWith('v1a,'))
    .some((part) => verify(null, signed, key, Buffer.from(part.slice(4), 'base64')));
}
