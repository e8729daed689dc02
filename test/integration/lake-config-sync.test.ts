// The operator's configuration push against a real lake server in-process: the lake reports the
// revision (a digest of the resolved configuration) it converges to, so a configuration it has is
// not pushed again, also by a restarted operator (a new LakeConfigSync remembers nothing), and a
// rotated credential behind an unchanged ${secrets:...} reference is pushed although the
// ContextLake's generation did not change.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTEXT_LAKE_NAME, CONTEXT_LAKE_SECRET_NAME, secretData } from '../../crds/index.js';
import type { ContextLake, Secret } from '../../crds/index.js';
import { LakeConfigSchema } from '../../lake/config.js';
import { startLakeServer } from '../../lake/server.js';
import type { RunningLake } from '../../lake/server.js';
import { LakeConfigSync } from '../../operator/context-lake/config-sync.js';
import { createLogger } from '../../platform/log.js';

const TOKEN = randomBytes(24).toString('base64url');
let dir: string;
let server: RunningLake;

const lake: ContextLake = {
  apiVersion: 'agentry.dev/v1alpha1',
  kind: 'ContextLake',
  metadata: { name: CONTEXT_LAKE_NAME, namespace: 'agentry-org-sync', uid: 'uid-1', generation: 3 },
  spec: {
    config: {
      version: 'v1',
      kind: 'Spicepod',
      name: 'sync',
      datasets: [
        {
          name: 'remote',
          // Nothing listens there: the dataset fails to load, which is beside the point here.
          from: 's3://unreachable-bucket/data.csv',
          params: {
            s3_auth: 'key',
            s3_key: '${secrets:remote.s3_key}',
            s3_secret: '${secrets:remote.s3_secret}',
            s3_endpoint: 'http://127.0.0.1:9',
            allow_http: 'true',
          },
        },
      ],
      views: [],
    },
    operatingMode: 'Running',
    idleTimeout: '15m',
  },
};

const credentials = (secret: string): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'Opaque',
  metadata: { name: CONTEXT_LAKE_SECRET_NAME, namespace: 'agentry-org-sync' },
  data: secretData({ 'remote.s3_key': 'AKIASYNCTEST', 'remote.s3_secret': secret }),
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-sync-'));
  server = await startLakeServer(
    LakeConfigSchema.parse({
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_HOST: '127.0.0.1',
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
      AGENTRY_LAKE_THREADS: '1',
      AGENTRY_LAKE_MEMORY_LIMIT: '256MB',
    }),
    { logger: createLogger({ level: 'silent' }) },
  );
});

afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('pushing a lake its configuration', () => {
  const where = () => ({ endpoint: server.url, token: TOKEN });

  it('pushes a configuration the lake does not have, and not twice', async () => {
    const sync = new LakeConfigSync();
    const first = await sync.sync(lake, where(), credentials('secret-one'));
    expect(first).toMatchObject({ kind: 'answered', pushed: true });
    const second = await sync.sync(lake, where(), credentials('secret-one'));
    expect(second).toMatchObject({ kind: 'answered', pushed: false });
  });

  it('does not push again after an operator restart when the lake already has it', async () => {
    const restarted = new LakeConfigSync();
    expect(await restarted.sync(lake, where(), credentials('secret-one'))).toMatchObject({ pushed: false });
  });

  it('pushes a rotated credential though the generation is unchanged, also after a restart', async () => {
    const restarted = new LakeConfigSync();
    expect(await restarted.sync(lake, where(), credentials('secret-two'))).toMatchObject({ pushed: true });
    expect(await restarted.sync(lake, where(), credentials('secret-two'))).toMatchObject({ pushed: false });
  });

  it('pushes a new generation', async () => {
    const next: ContextLake = { ...lake, metadata: { ...lake.metadata, generation: 4 } };
    expect(await new LakeConfigSync().sync(next, where(), credentials('secret-two'))).toMatchObject({
      pushed: true,
    });
  });

  it('keeps the revision free of credential values', async () => {
    const status = await (
      await fetch(`${server.url}/v1/status`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).text();
    expect(status).not.toContain('secret-two');
    expect(status).toMatch(/"revision":"4:[0-9a-f]{64}"/);
  });
});
