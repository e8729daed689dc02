import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { SecretType } from '../../crds/core.js';
import type { Secret } from '../../crds/core.js';
import { KubernetesStore } from '../../platform/store/kubernetes.js';
import { StoreError } from '../../platform/store/types.js';

const TOKEN = 'sekret-token-123';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

const secret = (name: string, resourceVersion: string): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'ns-a', resourceVersion },
});

const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;

/** A stand-in API server on loopback: each path scripts one behaviour. */
function route(req: http.IncomingMessage, res: http.ServerResponse, seen: Seen): void {
  const url = new URL(seen.url, 'http://x');
  const json = (code: number, body: unknown) => {
    res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };
  if (url.pathname.endsWith('/secrets/s1')) {
    json(200, secret('s1', '5'));
    return;
  }
  if (url.pathname.endsWith('/secrets/denied')) {
    json(401, { kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    return;
  }
  if (url.pathname.endsWith('/secrets/slow')) return; // never answers
  if (url.pathname === '/api/v1/namespaces/ns-a/secrets' && req.method === 'POST') {
    json(201, JSON.parse(seen.body));
    return;
  }
  if (url.searchParams.get('labelSelector') === 'idle') {
    // a watch that sends two events in one chunk, then stays open
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(line('ADDED', secret('a', '2')) + line('MODIFIED', secret('a', '3')).slice(0, 20));
    setTimeout(() => res.write(line('MODIFIED', secret('a', '3')).slice(20)), 20);
    return;
  }
  if (url.searchParams.get('labelSelector') === 'ends') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(line('ADDED', secret('a', '2')));
    return;
  }
  if (url.searchParams.get('labelSelector') === 'drops') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(line('ADDED', secret('a', '2')));
    setTimeout(() => res.socket?.destroy(), 20);
    return;
  }
  res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
}

describe('KubeConfigTransport against a loopback server', () => {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(parts).toString(),
      };
      seen.push(entry);
      route(req, res, entry);
    });
  });
  let store: KubernetesStore;
  /** The same server with a short request timeout: only for the silent path, which never answers. */
  let impatient: KubernetesStore;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}/`, skipTLSVerify: true }],
      users: [{ name: 'u', token: TOKEN }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    // Generous: a loaded machine's first request may take well over 200 ms.
    store = KubernetesStore.fromKubeConfig(kubeConfig, { requestTimeoutMs: 30_000 });
    impatient = KubernetesStore.fromKubeConfig(kubeConfig, { requestTimeoutMs: 200 });
  });

  afterAll(async () => {
    await store.close();
    await impatient.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads with the bearer token', async () => {
    await expect(store.get(SecretType, 'ns-a', 's1')).resolves.toEqual(secret('s1', '5'));
    expect(seen.at(-1)).toMatchObject({
      method: 'GET',
      url: '/api/v1/namespaces/ns-a/secrets/s1',
      authorization: `Bearer ${TOKEN}`,
    });
  });

  it('sends JSON bodies', async () => {
    const created = await store.create(SecretType, { ...secret('s2', ''), data: { k: 'dg==' } });
    expect(created.data).toEqual({ k: 'dg==' });
    expect(JSON.parse(seen.at(-1)?.body ?? '')).toMatchObject({ kind: 'Secret', metadata: { name: 's2' } });
  });

  it('maps a text 404 and a 401 without leaking the token', async () => {
    const missingType = await store.get(SecretType, 'ns-a', 'other').catch((err: unknown) => err);
    expect(missingType).toMatchObject({ reason: 'NotFound' });
    const denied = await store.get(SecretType, 'ns-a', 'denied').catch((err: unknown) => err);
    expect(denied).toBeInstanceOf(StoreError);
    expect(denied).toMatchObject({ reason: 'Forbidden' });
    expect((denied as Error).message).not.toContain(TOKEN);
  });

  it('gives up on a silent server', async () => {
    await expect(impatient.get(SecretType, 'ns-a', 'slow')).rejects.toMatchObject({ reason: 'Unavailable' });
  });

  it('streams watch events split across chunks and stops on abort', async () => {
    const controller = new AbortController();
    const events: string[] = [];
    const watch = await store.watch(
      SecretType,
      { namespace: 'ns-a', resourceVersion: '1', labelSelector: 'idle', signal: controller.signal },
      (e) => {
        events.push(e.type);
        if (events.length === 2) controller.abort();
      },
    );
    await expect(watch.done).resolves.toBeUndefined();
    expect(events).toEqual(['ADDED', 'MODIFIED']);
  });

  it('ends a watch with Unavailable when the server ends or drops it', async () => {
    for (const labelSelector of ['ends', 'drops']) {
      const events: string[] = [];
      const watch = await store.watch(
        SecretType,
        { resourceVersion: '1', labelSelector, signal: new AbortController().signal },
        (e) => events.push(e.type),
      );
      await expect(watch.done).rejects.toMatchObject({ reason: 'Unavailable' });
      expect(events).toEqual(['ADDED']);
    }
  });
});
