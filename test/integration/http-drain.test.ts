// A draining API process (SIGTERM): no new connections, in-flight requests finished, event
// streams ended cleanly, a stuck request cut at the deadline. Real servers and clients on loopback.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, request } from 'node:http';
import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { drainable } from '../../platform/http-drain.js';
import type { DrainableServer } from '../../platform/http-drain.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.closeAllConnections();
});

/** A server tracked for draining from its first request, as the API's is. */
async function serve(handler: RequestListener): Promise<{ drain: DrainableServer; port: number }> {
  const server = createServer(handler);
  servers.push(server);
  const drain = drainable(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { drain, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

/** GET on a connection of its own; resolves with the response once its headers arrive. */
const get = (port: number, path: string, headers: Record<string, string> = {}): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers, agent: false }, resolve).on('error', reject).end();
  });

/** The body, once the response ends; rejects when the connection breaks first. */
const bodyOf = (res: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => {
      resolve(text);
    });
    res.on('aborted', () => {
      reject(new Error('aborted'));
    });
    res.on('error', reject);
  });

describe('draining an HTTP server', () => {
  it('finishes a request in flight and refuses new connections', async () => {
    let finish: (() => void) | undefined;
    const { drain, port } = await serve((_req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.write('part one, ');
      finish = () => res.end('part two');
    });
    const inFlight = await get(port, '/slow');
    const body = bodyOf(inFlight);
    const drained = drain.drain({ deadlineMs: 30_000 });
    await expect(get(port, '/new')).rejects.toThrow(/ECONNREFUSED/);
    finish?.();
    await expect(body).resolves.toBe('part one, part two');
    await drained;
  });

  it('ends an open event stream cleanly', async () => {
    const { drain, port } = await serve((_req, res) => {
      res.setHeader('X-Request-Id', 'r1');
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('id: 1\nevent: event\ndata: {}\n\n');
    });
    const stream = await get(port, '/events');
    const body = bodyOf(stream);
    await drain.drain({ deadlineMs: 30_000 });
    await expect(body).resolves.toBe('id: 1\nevent: event\ndata: {}\n\n');
  });

  it('ends an event stream whose headers were written at once, by the Accept of its client', async () => {
    const { drain, port } = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    const stream = await get(port, '/events', { Accept: 'text/event-stream' });
    const body = bodyOf(stream);
    await drain.drain({ deadlineMs: 30_000 });
    await expect(body).resolves.toBe(': hello\n\n');
  });

  it('cuts a request still running at the deadline', async () => {
    const { drain, port } = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': '100' });
      res.write('never finished');
    });
    const stuck = await get(port, '/stuck');
    const body = bodyOf(stuck);
    await drain.drain({ deadlineMs: 200 });
    await expect(body).rejects.toThrow();
  });
});
