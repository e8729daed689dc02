// The Kubernetes store's requests over HTTP/2, seen from a loopback TLS API server (a test-only
// self-signed certificate for 127.0.0.1 in test/fixtures/tls) that counts its connections.
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { SecretType } from '../../crds/core.js';
import type { Secret } from '../../crds/core.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import type { KubernetesStoreOptions } from '../../platform/store/kubernetes.js';

const cert = readFileSync('test/fixtures/tls/localhost.crt', 'utf8');
const key = readFileSync('test/fixtures/tls/localhost.key', 'utf8');

const secret: Secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's1', namespace: 'ns-a', resourceVersion: '5' },
};

type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

interface TestServer {
  port: number;
  /** TLS connections accepted, with the protocol each negotiated. */
  connections: string[];
  /** The HTTP version of each request. */
  versions: string[];
  close(): Promise<void>;
}

const answer: Handler = (_req, res) => {
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(secret));
};

async function serve(kind: 'h2' | 'http1', handler: Handler = answer): Promise<TestServer> {
  const connections: string[] = [];
  const versions: string[] = [];
  const onRequest: Handler = (req, res) => {
    versions.push(req.httpVersion);
    handler(req, res);
  };
  const server =
    kind === 'h2'
      ? http2.createSecureServer({ cert, key, allowHTTP1: true }, onRequest)
      : https.createServer({ cert, key }, onRequest);
  server.on('secureConnection', (socket: TLSSocket) => connections.push(String(socket.alpnProtocol)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    versions,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

describe('KubeConfigTransport over HTTP/2', () => {
  const servers: TestServer[] = [];
  const stores: KubernetesStore[] = [];

  const storeOn = (server: TestServer, options: KubernetesStoreOptions = {}): KubernetesStore => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `https://127.0.0.1:${server.port}`,
          caData: Buffer.from(cert).toString('base64'),
        },
      ],
      users: [{ name: 'u', token: 'sekret' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const store = KubernetesStore.fromKubeConfig(kubeConfig, { http2: true, ...options });
    stores.push(store);
    return store;
  };
  const started = async (kind: 'h2' | 'http1', handler?: Handler): Promise<TestServer> => {
    const server = await serve(kind, handler);
    servers.push(server);
    return server;
  };

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('sends requests made at once over one HTTP/2 connection', async () => {
    const server = await started('h2');
    const store = storeOn(server);
    const reads = Array.from({ length: 10 }, () => store.get(SecretType, 'ns-a', 's1'));
    await expect(Promise.all(reads)).resolves.toEqual(Array.from({ length: 10 }, () => secret));
    expect(server.connections).toEqual(['h2']);
    expect(new Set(server.versions)).toEqual(new Set(['2.0']));
  });

  it('sends the Authorization header of the kubeconfig with each request', async () => {
    const seen: (string | undefined)[] = [];
    const server = await started('h2', (req, res) => {
      seen.push(req.headers.authorization);
      answer(req, res);
    });
    await storeOn(server).get(SecretType, 'ns-a', 's1');
    expect(seen).toEqual(['Bearer sekret']);
  });

  it('sends a DELETE with its preconditions as the body, and a GET with none', async () => {
    const bodies: string[] = [];
    const server = await started('h2', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        bodies.push(`${req.method ?? ''} ${body}`);
        answer(req, res);
      });
    });
    const store = storeOn(server);
    await store.get(SecretType, 'ns-a', 's1');
    await store.delete(SecretType, 'ns-a', 's1', { uid: 'u-1' });
    expect(bodies[0]).toBe('GET ');
    expect(bodies[1]).toMatch(/^DELETE .*"uid":"u-1"/);
  });

  it('falls back to HTTP/1.1 for a server without HTTP/2, and stays there', async () => {
    const server = await started('http1');
    const store = storeOn(server);
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    expect(server.versions).toEqual(['1.1', '1.1']);
    // The handshake that asked for h2 alone was refused; then one kept-alive HTTP/1.1 connection.
    expect(server.connections).toHaveLength(1);
  });

  it('keeps requests on HTTP/1.1 unless asked for HTTP/2', async () => {
    const server = await started('h2');
    const store = storeOn(server, { http2: false });
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    expect(server.versions).toEqual(['1.1']);
  });

  it('keeps requests on HTTP/1.1 when the environment sets DISABLE_HTTP2, as client-go does', async () => {
    const server = await started('h2');
    process.env['DISABLE_HTTP2'] = '1';
    try {
      await expect(storeOn(server).get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    } finally {
      delete process.env['DISABLE_HTTP2'];
    }
    expect(server.versions).toEqual(['1.1']);
  });

  it('opens a new connection for the next request once the server has ended the last one', async () => {
    const server = await started('h2', (req, res) => {
      answer(req, res);
      // As kube-apiserver does after its idle timeout: GOAWAY, then the connection closes.
      if ('stream' in req) req.stream.session?.close();
    });
    const store = storeOn(server);
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    expect(server.connections).toEqual(['h2', 'h2']);
  });

  it('fails a request the server does not answer in time, and the next one still goes through', async () => {
    let calls = 0;
    const server = await started('h2', (req, res) => {
      calls++;
      if (calls > 1) answer(req, res); // the first is never answered
    });
    // Long enough for the second request on a loaded machine, which must get through in time.
    const store = storeOn(server, { requestTimeoutMs: 2_000 });
    await expect(store.get(SecretType, 'ns-a', 's1')).rejects.toThrow(/no answer within 2000 ms/);
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
  });

  it('keeps at most maxConnections requests in flight, the rest waiting their turn', async () => {
    let inFlight = 0;
    let most = 0;
    const server = await started('h2', (req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        answer(req, res);
      }, 20);
    });
    const store = storeOn(server, { maxConnections: 3 });
    const reads = (count: number): Promise<Secret | undefined>[] =>
      Array.from({ length: count }, () => store.get(SecretType, 'ns-a', 's1'));
    const first = reads(6);
    // A second wave once a place was handed over: a handed-over place must still count.
    await Promise.race(first);
    await Promise.all([...first, ...reads(6)]);
    expect(most).toBe(3);
  });
});
