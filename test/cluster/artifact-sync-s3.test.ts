// The operator's artifact sync against S3ObjectStore on the cluster harness's moto, with a real
// in-process runner: S3's quoted ETags, and multipart uploads (past 5 MiB) whose ETag is no MD5.
// Other tests share moto: this file uses a bucket of its own and never resets it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncArtifacts } from '../../operator/task/artifacts/sync.js';
import type { ArtifactSyncResult } from '../../operator/task/artifacts/sync.js';
import { createLogger } from '../../platform/log.js';
import { artifactKey } from '../../platform/objectstore/keys.js';
import { S3ObjectStore } from '../../platform/objectstore/s3.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { createRunnerApp, listenRunner } from '../../runner/server.js';
import type { RunnerApp, RunningRunner } from '../../runner/server.js';
import { RunnerState } from '../../runner/state.js';
import { useMotoBucket } from './moto-bucket.js';

const NAMESPACE = 'agentry-org-s3sync';
const WORKSPACE = 'w1';
const TOKEN = randomBytes(24).toString('base64url');
const { bucket, connection } = useMotoBucket('artifact-sync');

let root: string;
let artifacts: string;
let store: S3ObjectStore;
let app: RunnerApp;
let http: RunningRunner;
let runner: RunnerClient;

beforeAll(async () => {
  store = new S3ObjectStore({ bucket, ...connection() });
  root = await mkdtemp(join(tmpdir(), 'agentry-artifact-sync-s3-'));
  artifacts = join(root, 'code', 'artifacts');
  await mkdir(artifacts, { recursive: true });
  app = createRunnerApp({
    token: TOKEN,
    logger: createLogger({ level: 'silent' }),
    state: new RunnerState(),
    version: '0.0.0-test',
    workdir: join(root, 'code'),
    stateDir: join(root, 'state'),
  });
  await app.start();
  http = await listenRunner(app.app, { host: '127.0.0.1', port: 0, closeGraceMs: 500 });
  runner = new RunnerClient({ endpoint: http.url, token: TOKEN });
}, 60_000);

afterAll(async () => {
  await http.stop();
  await app.shutdown();
  await rm(root, { recursive: true, force: true });
  store.close();
});

const sync = (): Promise<ArtifactSyncResult> =>
  syncArtifacts({
    runner,
    store,
    namespace: NAMESPACE,
    workspace: WORKSPACE,
    logger: createLogger({ level: 'silent' }),
  });

const md5 = (bytes: Buffer): string => createHash('md5').update(bytes).digest('hex');

describe('artifact sync with S3', () => {
  const big = randomBytes(7 * 1024 * 1024); // past lib-storage's 5 MiB part size: a multipart upload

  it('uploads the workspace’s files, a multipart one included, with the bytes intact', async () => {
    await writeFile(join(artifacts, 'small.txt'), 'small');
    await mkdir(join(artifacts, 'data'));
    await writeFile(join(artifacts, 'data', 'big.bin'), big);
    expect(await sync()).toEqual({ actions: 2, failures: [] });
    const got = await store.get(artifactKey(NAMESPACE, WORKSPACE, 'data/big.bin'));
    const chunks: Buffer[] = [];
    for await (const chunk of got?.body ?? []) chunks.push(Buffer.from(chunk as Buffer));
    expect(md5(Buffer.concat(chunks))).toBe(md5(big));
  }, 60_000);

  it('then has nothing to do, although the multipart ETag is not the file’s MD5', async () => {
    const info = await store.head(artifactKey(NAMESPACE, WORKSPACE, 'data/big.bin'));
    expect(info?.etag.replace(/"/g, '')).not.toBe(md5(big));
    expect(await sync()).toEqual({ actions: 0, failures: [] });
  }, 60_000);

  it('brings a file replaced in S3 into the workspace, and deletes one deleted there', async () => {
    await store.put(artifactKey(NAMESPACE, WORKSPACE, 'small.txt'), Buffer.from('replaced in S3'));
    await store.delete(artifactKey(NAMESPACE, WORKSPACE, 'data/big.bin'));
    expect(await sync()).toEqual({ actions: 2, failures: [] });
    expect(await readFile(join(artifacts, 'small.txt'), 'utf8')).toBe('replaced in S3');
    await expect(readFile(join(artifacts, 'data', 'big.bin'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await sync()).toEqual({ actions: 0, failures: [] });
  }, 60_000);
});
