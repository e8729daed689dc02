import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LakeClient } from '../../platform/lake-client.js';
import type { LakeStatus } from '../../platform/lake-protocol.js';
import { REPOSITORY_LAKE_COMMAND } from '../support/runner-command.js';
import { stopChild, waitForOutput } from '../support/spawn-cli.js';
import { loopbackCertificate } from '../support/tls.js';

const TOKEN = randomBytes(24).toString('base64url'); // 32 characters
const LISTENING = /^agentry lake listening on (http:\/\/127\.0\.0\.1:(\d+))$/m;

let dir: string;

/** `agentry lake` as the process runtime starts it: the repository's command, a clean environment. */
function spawnLake(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(REPOSITORY_LAKE_COMMAND.command, REPOSITORY_LAKE_COMMAND.args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: 'pipe',
  });
}

function collect(child: ChildProcessWithoutNullStreams): { stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { stdout: () => stdout, stderr: () => stderr };
}

const exited = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code);
    }),
  );

let https: Server;
let httpsUrl = '';

/**
 * An https server with a certificate made here for 127.0.0.1; the lake process trusts it through
 * NODE_EXTRA_CA_CERTS, as a lake trusts a private CA in a cluster.
 */
async function startHttps(): Promise<void> {
  const { key, cert } = await loopbackCertificate(dir);
  https = createHttpsServer({ key, cert }, (req, res) => {
    if (new URL(req.url ?? '/', 'https://x').pathname !== '/data/cities.csv') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/csv' }).end('city,country\nLisbon,PT\nOslo,NO\n');
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  const address = https.address();
  httpsUrl = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-cli-'));
  await startHttps();
});

afterAll(async () => {
  https.closeAllConnections();
  await new Promise((resolve) => https.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function waitUntilLoaded(client: LakeClient, generation: number): Promise<LakeStatus> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = await client.status();
    if (!status.loading && status.generation === generation) return status;
    if (Date.now() > deadline) throw new Error(`not loaded: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('agentry lake (the command)', () => {
  it('prints its listening line once, loads over https, serves with the token, and stops with exit 0 on SIGTERM', async () => {
    const child = spawnLake({
      NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'),
      // The https server is on loopback: allowed here, as in the embedded default.
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
      AGENTRY_LOG_LEVEL: 'debug',
    });
    const output = collect(child);
    try {
      const out = await waitForOutput(child, LISTENING, 60_000);
      const [, url = '', port = ''] = LISTENING.exec(out) ?? [];
      expect(Number(port)).toBeGreaterThan(0);
      const client = new LakeClient({ endpoint: url, token: TOKEN });
      await client.applyConfig({
        generation: 7,
        config: {
          name: 'cli',
          datasets: [
            { name: 'cities', from: `${httpsUrl}/data/cities.csv?X-Amz-Signature=presigned-secret` },
            { name: 'nothing', from: `${httpsUrl}/data/nothing.csv?X-Amz-Signature=presigned-secret` },
          ],
        },
      });
      const status = await waitUntilLoaded(client, 7);
      expect(status.datasets.cities).toMatchObject({ status: 'ready', rowCount: 2 });
      expect(status.datasets.nothing).toMatchObject({
        status: 'error',
        error: `dataset nothing: ${httpsUrl}/data/nothing.csv: the server answered HTTP 404`,
      });
      const rows = await client.sql({ query: 'SELECT city FROM cities ORDER BY city' });
      expect(rows.rows).toEqual([{ city: 'Lisbon' }, { city: 'Oslo' }]);
      const health = await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(health.status).toBe(200);
    } finally {
      const code = await stopChild(child);
      expect(code).toBe(0);
    }
    expect(output.stdout().match(/agentry lake listening on/g)).toHaveLength(1);
    expect(output.stdout() + output.stderr()).not.toContain(TOKEN);
    expect(output.stdout() + output.stderr()).not.toContain('presigned-secret');
  }, 90_000);

  it('refuses to start without a token, naming the variable', async () => {
    const child = spawnLake({ AGENTRY_LAKE_PORT: '0', AGENTRY_LAKE_DATA_DIR: join(dir, 'none') });
    const output = collect(child);
    expect(await exited(child)).toBe(1);
    expect(output.stderr()).toMatch(/AGENTRY_LAKE_TOKEN: is required/);
  }, 60_000);

  it('refuses an unknown connector without echoing the token', async () => {
    const child = spawnLake({ AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_CONNECTORS: 's3,ftp' });
    const output = collect(child);
    expect(await exited(child)).toBe(1);
    expect(output.stderr()).toMatch(/AGENTRY_LAKE_CONNECTORS/);
    expect(output.stderr()).not.toContain(TOKEN);
  }, 60_000);
});
