// Two API replicas over one store save to the same lake at the same time (docs/api.md#context-lake): the
// ContextLake is replaced with the resourceVersion it was computed from, a lost race recomputes
// on the fresh configuration, and credentials pruned by one replica never include those another
// replica has written for a save still in progress. No change is lost.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PENDING_GRACE_MS,
  pruneCredentials,
  storeCredentials,
} from '../../../api/context-lake/credentials.js';
import { CONTEXT_LAKE_NAME, CONTEXT_LAKE_SECRET_NAME } from '../../../crds/context-lake/types.js';
import { SecretType, secretValue } from '../../../crds/index.js';
import { secretReferenceOf } from '../../../platform/lake-config/dataset-source.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeNamespace, s3Dataset, storedLake } from './context-lake-support.js';

const ORG = 'replicated';
let dir: string;
let first: TestApi;
let second: TestApi;
let key: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-replicas-'));
  const store = await EmbeddedStore.open(join(dir, 'store'));
  first = await startTestApi({ store });
  second = await startTestApi({ store });
  key = await first.key({ org: ORG, user: 'rey' });
  await eventually(async () => (await lake(second, key, 'GET', '/config')).status === 200);
});
afterAll(async () => {
  await second.stop();
  await first.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('saves through two replicas at once', () => {
  it('keeps every dataset and every credential', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `shard_${i}`);
    const answers = await Promise.all(
      names.map((name, i) =>
        lake(
          i % 2 === 0 ? first : second,
          key,
          'POST',
          '/datasets',
          s3Dataset(name, {
            params: { s3_auth: 'key', s3_key: `AKIA${name}`, s3_secret: `secret-of-${name}` },
          }),
        ),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 201));

    const stored = await storedLake(first, ORG);
    expect(stored?.spec.config.datasets.map((d) => d.name).sort()).toEqual([...names].sort());
    const secret = await first.store.get(SecretType, lakeNamespace(ORG), CONTEXT_LAKE_SECRET_NAME);
    for (const dataset of stored?.spec.config.datasets ?? []) {
      const reference = secretReferenceOf(dataset.params?.s3_secret ?? '');
      expect(reference).toBe(`${dataset.name}.s3_secret`);
      expect(secret === undefined ? undefined : secretValue(secret, reference ?? '')).toBe(
        `secret-of-${dataset.name}`,
      );
    }
  });

  it('keeps a credential another save has written but not yet referenced, until its grace ends', async () => {
    const current = await storedLake(first, ORG);
    if (current === undefined) throw new Error('no lake');
    const written = new Date();
    // What a save on another replica does first: the value goes in, the configuration follows.
    await storeCredentials(first.store, current, { 'late.s3_secret': 'in-flight' }, written);
    const keys = async () =>
      Object.keys(
        (await first.store.get(SecretType, lakeNamespace(ORG), CONTEXT_LAKE_SECRET_NAME))?.data ?? {},
      );

    await pruneCredentials(first.store, lakeNamespace(ORG), CONTEXT_LAKE_NAME, [], written);
    expect(await keys()).toContain('late.s3_secret');
    const later = new Date(written.getTime() + PENDING_GRACE_MS + 1);
    await pruneCredentials(first.store, lakeNamespace(ORG), CONTEXT_LAKE_NAME, [], later);
    expect(await keys()).not.toContain('late.s3_secret');
    expect(await keys()).toContain('shard_0.s3_secret');
  });

  it('drops its own unreferenced credential at once when its save did not go through', async () => {
    const current = await storedLake(first, ORG);
    if (current === undefined) throw new Error('no lake');
    const now = new Date();
    await storeCredentials(first.store, current, { 'failed.s3_key': 'orphan' }, now);
    await pruneCredentials(first.store, lakeNamespace(ORG), CONTEXT_LAKE_NAME, ['failed.s3_key'], now);
    const secret = await first.store.get(SecretType, lakeNamespace(ORG), CONTEXT_LAKE_SECRET_NAME);
    expect(Object.keys(secret?.data ?? {})).not.toContain('failed.s3_key');
    expect(secret?.metadata.annotations?.['agentry.dev/pending-credentials']).toBeUndefined();
  });
});
