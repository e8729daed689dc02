// What flows through the egress proxy: TLS end to end in a CONNECT tunnel (the proxy never
// decrypts) when the server name is the CONNECT host, nothing when it is not, and plain HTTP
// forwarded without the prompt token.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { Socket } from 'node:net';
import { TaskType } from '../../../crds/index.js';
import { nameCertificate } from '../../support/tls.js';
import { until } from '../../support/until.js';
import { ORG_NAMESPACE, connectThrough, getThrough, promptOf, startProxyFixture } from './egress-support.js';
import type { ProxyFixture } from './egress-support.js';

const TLS_HOST = 'secure.test';

let dir = '';
let fixture: ProxyFixture;
let tlsServer: Server;
let tlsPort = 0;
let plainServer: Server;
let plainPort = 0;
let cert = '';
let seenHeaders: IncomingHttpHeaders = {};

const portOf = (server: Server): number => {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-egress-tls-'));
  const certificate = await nameCertificate(dir, TLS_HOST);
  cert = certificate.cert;
  tlsServer = createHttpsServer(certificate, (_req, res) => res.end('secret over tls'));
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = portOf(tlsServer);
  plainServer = createServer((req, res) => {
    seenHeaders = req.headers;
    res.writeHead(201, { 'x-upstream': 'yes' }).end(`plain ${req.method ?? ''} ${req.url ?? ''}`);
  });
  await new Promise<void>((resolve) => plainServer.listen(0, '127.0.0.1', resolve));
  plainPort = portOf(plainServer);
  fixture = await startProxyFixture([
    { host: TLS_HOST, ports: [tlsPort] },
    { host: 'other-name.test', ports: [tlsPort] },
    { host: 'plain.test', ports: [plainPort] },
    // Default ports: a tunnel must carry TLS (the proxy refuses anything else before connecting).
    { host: 'defaults.test' },
  ]);
}, 60_000);

afterAll(async () => {
  await fixture.stop();
  for (const server of [tlsServer, plainServer]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  }
  await rm(dir, { recursive: true, force: true });
});

/** An HTTPS GET over an established tunnel, the server's certificate checked for `servername`. */
function httpsOver(socket: Socket, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, servername, ca: cert });
    tls.once('secureConnect', () => {
      tls.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    tls.on('data', (chunk: Buffer) => (text += chunk.toString()));
    tls.once('end', () => {
      resolve(text);
    });
    tls.once('error', reject);
  });
}

const denialsOf = async (task: string) =>
  (await fixture.store.get(TaskType, ORG_NAMESPACE, task))?.status?.egressDenials ?? [];

describe('egress proxy tunnels', () => {
  it('carries TLS end to end to an allowed host whose server name matches the CONNECT host', async () => {
    const { token } = await promptOf(fixture, 'tls-ok');
    const tunnel = await connectThrough(fixture.port, `${TLS_HOST}:${tlsPort}`, token);
    expect(tunnel.status).toBe(200);
    const answer = await httpsOver(tunnel.socket, TLS_HOST);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('secret over tls');
  });

  it('closes a tunnel whose TLS server name differs from the CONNECT host, and records sni_mismatch', async () => {
    const { token } = await promptOf(fixture, 'tls-mismatch');
    const tunnel = await connectThrough(fixture.port, `other-name.test:${tlsPort}`, token);
    expect(tunnel.status).toBe(200);
    // Closed before a byte reached the server: the handshake ends (or fails) with nothing read.
    const answer = await httpsOver(tunnel.socket, TLS_HOST).catch(() => 'closed with an error');
    expect(answer).not.toContain('secret over tls');
    const denials = await until('the sni_mismatch denial', async () => {
      const found = await denialsOf('tls-mismatch');
      return found.length > 0 ? found : undefined;
    });
    expect(denials).toMatchObject([{ host: 'other-name.test', port: tlsPort, reason: 'sni_mismatch' }]);
  });

  it('refuses a tunnel that does not start with TLS on a port the rule does not name', async () => {
    const { token } = await promptOf(fixture, 'not-tls');
    const tunnel = await connectThrough(fixture.port, 'defaults.test:443', token);
    expect(tunnel.status).toBe(200);
    const closed = new Promise<void>((resolve) =>
      tunnel.socket.once('close', () => {
        resolve();
      }),
    );
    tunnel.socket.write('SSH-2.0-OpenSSH_9.2\r\n');
    await closed;
    const denials = await until('the not_allowed denial', async () => {
      const found = await denialsOf('not-tls');
      return found.length > 0 ? found : undefined;
    });
    expect(denials).toMatchObject([{ host: 'defaults.test', port: 443, reason: 'not_allowed' }]);
  });

  it('forwards plain HTTP in absolute form without the Proxy-Authorization header, streaming the answer back', async () => {
    const { token } = await promptOf(fixture, 'plain');
    const answer = await getThrough(fixture.port, `http://plain.test:${plainPort}/path?q=1`, token);
    expect(answer).toMatchObject({ status: 201, body: 'plain GET /path?q=1' });
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(seenHeaders['proxy-authorization']).toBeUndefined();
    expect(seenHeaders.host).toBe(`plain.test:${plainPort}`);
  });
});
