// The Kubernetes store's connection reuse, seen from a loopback API server that counts connections.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { User } from '@kubernetes/client-node';
import { SecretType } from '../../crds/core.js';
import type { Secret } from '../../crds/core.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';

const secret: Secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's1', namespace: 'ns-a', resourceVersion: '5' },
};

/** A new token on every call: an exec plugin whose credential has no expiry is run per request. */
const execUser: User = {
  name: 'u',
  exec: {
    apiVersion: 'client.authentication.k8s.io/v1',
    command: process.execPath,
    args: [
      '-e',
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 't-' + process.hrtime.bigint() } }))`,
    ],
    interactiveMode: 'Never',
  },
};

describe('KubeConfigTransport connections', () => {
  const sockets: Socket[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    if (req.url?.includes('watch=true') === true) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders(); // stays open
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(secret));
  });
  server.on('connection', (socket: Socket) => sockets.push(socket));
  const stores: KubernetesStore[] = [];

  const storeOf = (user: User, maxConnections?: number): KubernetesStore => {
    const { port } = server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [user],
      contexts: [{ name: 'ctx', cluster: 'c', user: user.name }],
      currentContext: 'ctx',
    });
    const store = KubernetesStore.fromKubeConfig(
      kubeConfig,
      maxConnections === undefined ? {} : { maxConnections },
    );
    stores.push(store);
    return store;
  };
  const tokenUser: User = { name: 'u', token: 'sekret' };

  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    sockets.length = 0;
    authorizations.length = 0;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('twenty sequential reads share one connection', async () => {
    const store = storeOf(tokenUser);
    for (let i = 0; i < 20; i++) await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    expect(sockets).toHaveLength(1);
  });

  it('fifty parallel reads use at most maxConnections connections', async () => {
    const store = storeOf(tokenUser, 3);
    const reads = await Promise.all(Array.from({ length: 50 }, () => store.get(SecretType, 'ns-a', 's1')));
    expect(reads).toEqual(Array.from({ length: 50 }, () => secret));
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.length).toBeLessThanOrEqual(3);
  });

  it('sends an exec credential fetched per request on the kept-alive connection', async () => {
    const store = storeOf(execUser);
    await store.get(SecretType, 'ns-a', 's1');
    await store.get(SecretType, 'ns-a', 's1');
    expect(sockets).toHaveLength(1);
    expect(authorizations).toHaveLength(2);
    expect(authorizations[0]).toMatch(/^Bearer t-\d+$/);
    expect(authorizations[1]).toMatch(/^Bearer t-\d+$/);
    expect(authorizations[1]).not.toBe(authorizations[0]);
  });

  it('reads beside open watches when the request pool has one connection, and close ends them all', async () => {
    const store = storeOf(tokenUser, 1);
    const signal = new AbortController().signal;
    const watchSecrets = () => store.watch(SecretType, { resourceVersion: '1', signal }, () => undefined);
    const watches = await Promise.all([watchSecrets(), watchSecrets()]);
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret);
    expect(sockets).toHaveLength(3);
    await store.close();
    await Promise.all(watches.map((watch) => watch.done));
    const closed = (socket: Socket): Promise<unknown> =>
      socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once('close', resolve));
    await Promise.all(sockets.map(closed));
  });
});
