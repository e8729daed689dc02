// The lake's downloads pass the platform's SSRF guard. Every target here is a loopback listener
// that COUNTS connections: a refused target must never have been connected to. Other address
// classes (metadata, private ranges...) are checked by classification alone, in
// test/unit/outbound-targets.test.ts, never by connecting.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningLake } from '../../lake/server.js';
import { guardedGet } from '../../lake/sources/outbound.js';
import type { Dataset } from '../../crds/context-lake/types.js';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { loadOneDataset, startTestLake } from '../support/lake-server.js';
import { loopbackCertificate } from '../support/tls.js';

const TOKEN = randomBytes(24).toString('base64url');

/** A TCP listener on loopback that counts the connections it gets and closes them. */
interface CountingListener {
  server: Server;
  port: number;
  connections: number;
}

async function countingListener(host = '127.0.0.1'): Promise<CountingListener> {
  const listener: CountingListener = { server: createServer(), port: 0, connections: 0 };
  listener.server.on('connection', (socket) => {
    listener.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    listener.server.once('error', reject);
    listener.server.listen(0, host, resolve);
  });
  listener.port = (listener.server.address() as AddressInfo).port;
  return listener;
}

const close = (server: Server | HttpsServer): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
  });

let dir: string;
let v4: CountingListener;
let v6: CountingListener | undefined;
let generation = 0;

const startLake = (name: string, env: Record<string, string> = {}): Promise<RunningLake> =>
  startTestLake(TOKEN, { AGENTRY_LAKE_DATA_DIR: join(dir, name), ...env });

/** Pushes one dataset and waits until it settled; answers its state. */
async function load(lake: RunningLake, dataset: Dataset): Promise<LakeStatus['datasets'][string]> {
  generation += 1;
  return loadOneDataset(new LakeClient({ endpoint: lake.url, token: TOKEN }), generation, dataset);
}

const s3Dataset = (endpoint: string): Dataset => ({
  name: 'bucket',
  from: 's3://data-bucket/orders.csv',
  params: { s3_endpoint: endpoint, allow_http: 'true', s3_auth: 'public' },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-outbound-'));
  v4 = await countingListener();
  v6 = await countingListener('::1').catch(() => undefined); // a machine without IPv6 loopback
});

afterAll(async () => {
  await close(v4.server);
  if (v6 !== undefined) await close(v6.server);
  await rm(dir, { recursive: true, force: true });
});

describe('lake downloads with private targets disallowed (the cluster default)', () => {
  let lake: RunningLake;

  beforeAll(async () => {
    lake = await startLake('strict', { AGENTRY_LAKE_CONNECTORS: 's3,https' });
  }, 60_000);

  afterAll(async () => {
    await lake.stop();
  });

  const refusedTargets: [string, () => Dataset][] = [
    ['an s3_endpoint on 127.0.0.1', () => s3Dataset(`http://127.0.0.1:${v4.port}`)],
    ['an s3_endpoint named localhost', () => s3Dataset(`http://localhost:${v4.port}`)],
    [
      'an s3_endpoint on 127.0.0.1 spelt as one decimal number',
      () => s3Dataset(`http://2130706433:${v4.port}`),
    ],
    ['an s3_endpoint on 127.0.0.1 spelt in hex', () => s3Dataset(`http://0x7f.0.0.1:${v4.port}`)],
    [
      'an https dataset on 127.0.0.1',
      () => ({ name: 'web', from: `https://127.0.0.1:${v4.port}/orders.csv` }),
    ],
    [
      'an https dataset named localhost',
      () => ({ name: 'web', from: `https://localhost:${v4.port}/orders.csv` }),
    ],
    [
      'an https dataset on IPv4-mapped loopback',
      () => ({ name: 'web', from: `https://[::ffff:127.0.0.1]:${v4.port}/orders.csv` }),
    ],
  ];

  it.each(refusedTargets)('refuses %s without connecting to it', async (_what, dataset) => {
    const before = v4.connections;
    const state = await load(lake, dataset());
    expect(state.status).toBe('error');
    expect(state.error).toMatch(
      /is a loopback (address|name); dataset downloads may reach only public addresses/,
    );
    expect(v4.connections).toBe(before);
  });

  it('refuses an https dataset on ::1 without connecting to it', async () => {
    if (v6 === undefined) return; // no IPv6 loopback on this machine: the IPv4 cases stand
    const state = await load(lake, { name: 'web', from: `https://[::1]:${v6.port}/orders.csv` });
    expect(state).toMatchObject({ status: 'error' });
    expect(state.error).toContain('is a loopback address');
    expect(v6.connections).toBe(0);
  });
});

describe('lake downloads with private targets allowed (AGENTRY_LAKE_PRIVATE_TARGETS=true, the embedded default)', () => {
  it('connects to a loopback s3_endpoint', async () => {
    const lake = await startLake('open', {
      AGENTRY_LAKE_CONNECTORS: 's3',
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
    });
    try {
      const before = v4.connections;
      const state = await load(lake, s3Dataset(`http://127.0.0.1:${v4.port}`));
      // The listener hangs up: the load fails, but only after connecting.
      expect(state.status).toBe('error');
      expect(v4.connections).toBeGreaterThan(before);
    } finally {
      await lake.stop();
    }
  }, 60_000);
});

describe('lake https downloads: redirects', () => {
  let tls: HttpsServer;
  let ca: string;
  let port: number;

  beforeAll(async () => {
    const certificate = await loopbackCertificate(dir);
    ca = certificate.cert;
    tls = createHttpsServer({ key: certificate.key, cert: ca }, (_req, res) => {
      res.writeHead(302, { location: `https://127.0.0.1:${v4.port}/orders.csv` }).end();
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    port = (tls.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await close(tls);
  });

  it('refuses to follow a redirect and never connects to where it points', async () => {
    const before = v4.connections;
    const fetched = guardedGet(new URL(`https://127.0.0.1:${port}/orders.csv`), {
      policy: { allowPrivate: true },
      signal: AbortSignal.timeout(10_000),
      display: 'https://127.0.0.1/orders.csv',
      ca,
    });
    await expect(fetched).rejects.toThrow(/HTTP 302 \(redirects are not followed/);
    expect(v4.connections).toBe(before);
  });
});
