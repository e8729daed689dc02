// The SNI peek on real ClientHello bytes: what node:tls sends when it connects to a loopback
// listener (captured raw, never answered), for a name, without one, cut short, and non-TLS bytes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { peekClientHello } from '../../../egress/client-hello.js';

let server: Server;
let port = 0;
const captured: ((bytes: Buffer) => void)[] = [];

beforeAll(async () => {
  server = createServer((socket: Socket) => {
    socket.once('data', (bytes: Buffer) => {
      captured.shift()?.(bytes);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
});

/** The first bytes node:tls sends for `servername` (undefined: no SNI, as for an IP address). */
function clientHelloOf(servername: string | undefined): Promise<Buffer> {
  const bytes = new Promise<Buffer>((resolve) => captured.push(resolve));
  const tls = tlsConnect({ host: '127.0.0.1', port, ...(servername === undefined ? {} : { servername }) });
  tls.on('error', () => undefined); // the listener hangs up mid-handshake
  return bytes.finally(() => tls.destroy());
}

describe('peekClientHello', () => {
  it('reads the server name of a real ClientHello', async () => {
    const bytes = await clientHelloOf('registry.npmjs.org');
    expect(peekClientHello(bytes)).toEqual({ kind: 'client-hello', serverName: 'registry.npmjs.org' });
  });

  it('reports a ClientHello without a server name', async () => {
    const bytes = await clientHelloOf(undefined);
    expect(peekClientHello(bytes)).toEqual({ kind: 'client-hello', serverName: undefined });
  });

  it('asks for more bytes while the record is incomplete', async () => {
    const bytes = await clientHelloOf('github.com');
    for (const length of [0, 1, 5, 40, bytes.length - 1])
      expect(peekClientHello(bytes.subarray(0, length))).toEqual({ kind: 'incomplete' });
  });

  it('tells other protocols apart at the first bytes', () => {
    expect(peekClientHello(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n'))).toEqual({ kind: 'not-tls' });
    expect(peekClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'not-tls' });
    // A handshake record of another version is not TLS either.
    expect(peekClientHello(Buffer.from([22, 9, 9, 0, 4, 1, 0, 0, 0]))).toEqual({ kind: 'not-tls' });
  });

  it('treats a ClientHello with garbled lengths as one without a name, never reading past the end', async () => {
    const bytes = Buffer.from(await clientHelloOf('github.com'));
    bytes.writeUInt8(0xff, 43); // the session id length, now past the end of the record
    expect(peekClientHello(bytes)).toEqual({ kind: 'client-hello', serverName: undefined });
  });
});
