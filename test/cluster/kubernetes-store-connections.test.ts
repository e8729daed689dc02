// How many TLS connections the Kubernetes store opens to the real kube-apiserver: it must reuse
// them (issue 22: the keep-alive pool never ran, so every request paid a TCP and TLS handshake).
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { TLSSocket } from 'node:tls';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { NamespaceType } from '../../crds/index.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { testCluster } from './support.js';

const kubeConfig = (): KubeConfig => {
  const config = new KubeConfig();
  config.loadFromFile(testCluster().kubeconfig);
  return config;
};

const apiServerPort = (): number => {
  const server = kubeConfig().getCurrentCluster()?.server;
  if (server === undefined) throw new Error('the test kubeconfig names no cluster');
  return Number(new URL(server).port);
};

/**
 * Every TLS connection this process opens to the API server: https agents (watches) call
 * tls.connect with options, HTTP/2 sessions (requests) with the port first.
 */
const opened: TLSSocket[] = [];
const realConnect = tls.connect;

beforeAll(() => {
  const port = apiServerPort();
  tls.connect = new Proxy(realConnect, {
    apply(target, thisArg, args: unknown[]): unknown {
      const socket: unknown = Reflect.apply(target, thisArg, args);
      const [first] = args;
      const connectedPort =
        typeof first === 'object' && first !== null && 'port' in first ? Number(first.port) : Number(first);
      const toApiServer = connectedPort === port;
      if (toApiServer && socket instanceof tls.TLSSocket) opened.push(socket);
      return socket;
    },
  });
});

afterAll(() => {
  tls.connect = realConnect;
});

const stores: KubernetesStore[] = [];
const storeWith = (maxConnections?: number): KubernetesStore => {
  // As the API server opens its store: requests over HTTP/2.
  const store = KubernetesStore.fromKubeConfig(kubeConfig(), {
    http2: true,
    ...(maxConnections === undefined ? {} : { maxConnections }),
  });
  stores.push(store);
  return store;
};

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  opened.length = 0;
});

const readDefaultNamespace = async (store: KubernetesStore): Promise<void> => {
  const namespace = await store.get(NamespaceType, undefined, 'default');
  expect(namespace?.metadata.name).toBe('default');
};

describe('KubernetesStore connections to kube-apiserver', () => {
  it('twenty sequential reads share one HTTP/2 connection', async () => {
    const store = storeWith();
    for (let i = 0; i < 20; i++) await readDefaultNamespace(store);
    expect(opened.map((socket) => socket.alpnProtocol)).toEqual(['h2']);
  });

  it('fifty parallel reads share one HTTP/2 connection, at most maxConnections in flight', async () => {
    const store = storeWith(4);
    await Promise.all(Array.from({ length: 50 }, () => readDefaultNamespace(store)));
    expect(opened.map((socket) => socket.alpnProtocol)).toEqual(['h2']);
  });

  it('open watches do not hold back reads, and closing the store closes every connection', async () => {
    const store = storeWith(1);
    const signal = new AbortController().signal;
    const watches = await Promise.all(
      Array.from({ length: 3 }, () =>
        store.watch(NamespaceType, { resourceVersion: '', signal }, () => undefined),
      ),
    );
    for (let i = 0; i < 5; i++) await readDefaultNamespace(store);
    // Three watches on connections of their own, the reads on one HTTP/2 connection.
    expect(opened.length).toBe(4);
    await store.close();
    await Promise.all(watches.map((watch) => watch.done));
    await new Promise((resolve) => setImmediate(resolve));
    expect(opened.filter((socket) => !socket.destroyed)).toEqual([]);
  });
});
