// The lake server's bound on concurrent queries (lake/query-admission.ts) against real DuckDB: with
// one query allowed at once and a queue of four, six slow queries sent together give exactly one
// 429 busy, at once, and five answers.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningLake } from '../../lake/server.js';
import { LakeClient, LakeRequestError } from '../../platform/lake-client.js';
import { startTestLake } from '../support/lake-server.js';

const TOKEN = 'admission-test-token-0123456789abcdef';
/** About a second of one DuckDB thread: still running when the last of the six arrives. */
const SLOW_QUERY = 'SELECT sum(i) AS total FROM range(1000000000) t(i)';

let dir: string;
let lake: RunningLake;
let client: LakeClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-admission-'));
  lake = await startTestLake(TOKEN, {
    AGENTRY_LAKE_DATA_DIR: dir,
    AGENTRY_LAKE_MAX_CONCURRENT_QUERIES: '1',
  });
  client = new LakeClient({ endpoint: lake.url, token: TOKEN });
  await client.applyConfig({ generation: 1, config: { name: 'empty', datasets: [], views: [] } });
});

afterAll(async () => {
  await lake.stop();
  await rm(dir, { recursive: true, force: true });
});

const outcomeOf = (err: unknown): string =>
  err instanceof LakeRequestError ? `${String(err.status)} ${err.code ?? ''}` : String(err);

it('answers exactly the queries beyond the running one and its queue of four with 429 busy', async () => {
  const outcomes = await Promise.all(
    Array.from({ length: 6 }, () =>
      client.sql({ query: SLOW_QUERY, timeoutMs: 60_000 }).then(() => 'ok', outcomeOf),
    ),
  );
  expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(5);
  expect(outcomes.filter((outcome) => outcome !== 'ok')).toEqual(['429 busy']);
  expect((await client.status()).queries).toEqual({ running: 0, queued: 0, refused: 1 });
}, 120_000);
