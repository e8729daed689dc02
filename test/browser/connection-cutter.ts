import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

/**
 * A loopback TCP relay in front of the test server that can drop every open connection at once:
 * a browser's event stream breaks as on a flaky network, and reconnects through the relay. It
 * keeps the head of each request it relays, to show what the browser sent when it came back.
 */
export interface ConnectionCutter {
  /** `http://127.0.0.1:<port>`: the test server, through the relay. */
  url: string;
  /** The request line and headers of every request relayed so far, oldest first. */
  requestHeads(): string[];
  /** Ends every relayed connection, both ways, now. */
  cutAll(): void;
  close(): Promise<void>;
}

export async function startConnectionCutter(target: URL): Promise<ConnectionCutter> {
  const open = new Set<Socket>();
  /** What each client sent (several requests on a kept-alive connection). */
  const streams: { text: string }[] = [];
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    open.add(client).add(upstream);
    const sent = { text: '' };
    streams.push(sent);
    client.on('data', (chunk: Buffer) => {
      sent.text += chunk.toString('latin1');
    });
    client.pipe(upstream).pipe(client);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  const cutAll = (): void => {
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    // Plain HTTP/1.1 on loopback: a request's head is text from its request line to a blank line.
    requestHeads: () =>
      streams.flatMap(({ text }) =>
        [...text.matchAll(/^[A-Z]+ \S+ HTTP\/1\.1\r\n[\s\S]*?\r\n\r\n/gm)].map((m) => m[0]),
      ),
    cutAll,
    async close() {
      cutAll();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
