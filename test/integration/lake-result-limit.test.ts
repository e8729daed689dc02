// SQL answers are bounded in bytes as well as rows (AGENTRY_LAKE_MAX_RESULT_BYTES): a lake server in
// this process, asked for rows of about 1 MB each.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient } from '../../platform/lake-client.js';
import { startTestLake } from '../support/lake-server.js';

const TOKEN = randomBytes(24).toString('base64url');
const MEGABYTE_ROWS = (count: number): string =>
  `SELECT i AS n, repeat('x', 1000000) AS blob FROM range(${count}) t(i)`;

let dir: string;
let lake: RunningLake;
let client: LakeClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-limit-'));
  lake = await startTestLake(TOKEN, {
    AGENTRY_LAKE_DATA_DIR: join(dir, 'lake'),
    AGENTRY_LAKE_MEMORY_LIMIT: '512MB',
    AGENTRY_LAKE_MAX_RESULT_BYTES: String(16 * 1024 * 1024),
  });
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
  await client.applyConfig({ generation: 1, config: { name: 'limits' } });
}, 60_000);

afterAll(async () => {
  await lake.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('lake SQL answers: the byte limit', () => {
  it('refuses 2,000 rows of 1 MB with 413 result_too_large naming the limit', async () => {
    const failure = await client.sql({ query: MEGABYTE_ROWS(2000) }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ status: 413, code: 'result_too_large' });
    expect((failure as Error).message).toContain(`limit of ${16 * 1024 * 1024} bytes`);
  }, 60_000);

  it('answers rows of 1 MB whole while they fit', async () => {
    const result = await client.sql({ query: MEGABYTE_ROWS(5) });
    expect(result.rowCount).toBe(5);
    expect(result.truncated).toBe(false);
    expect(result.rows[4]).toEqual({ n: 4, blob: 'x'.repeat(1_000_000) });
  }, 60_000);

  it('applies a smaller limit a request asks for, never a larger one', async () => {
    const smaller = await client
      .sql({ query: MEGABYTE_ROWS(5), maxResultBytes: 2_000_000 })
      .catch((err: unknown) => err);
    expect(smaller).toMatchObject({ status: 413, code: 'result_too_large' });
    const larger = await client
      .sql({ query: MEGABYTE_ROWS(40), maxResultBytes: 1024 * 1024 * 1024 })
      .catch((err: unknown) => err);
    expect(larger).toMatchObject({ status: 413, code: 'result_too_large' });
  }, 60_000);

  it('keeps serving after refusing an answer', async () => {
    await client.sql({ query: MEGABYTE_ROWS(2000) }).catch(() => undefined);
    expect((await client.sql({ query: 'SELECT 42 AS answer' })).rows).toEqual([{ answer: 42 }]);
  }, 60_000);
});
