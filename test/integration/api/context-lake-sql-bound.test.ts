// POST /v1/context-lake/sql answers within its bound whatever it waits on: here the store never
// finishes the write that wakes the lake (an overloaded store, a stuck API server), and the call
// must still end with 504 timeout at its deadline instead of hanging past it.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { interceptingStore } from './tasks-support.js';

let dir: string;
let api: TestApi;
let key: string;
/** Releases the writes held back, so that nothing is left pending when the test ends. */
let release: () => void = () => undefined;
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-sql-bound-'));
  const store = interceptingStore(await EmbeddedStore.open(join(dir, 'store')), {
    beforeCreate: async (kind) => {
      if (kind === 'ContextLake') await held;
    },
  });
  api = await startTestApi({ store, lakeSqlTimeoutMs: 500 });
  key = await api.key({ org: 'acme' });
});

afterAll(async () => {
  release();
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

it('answers 504 timeout at its deadline while the write that wakes the lake never finishes', async () => {
  const res = await call(api, '/v1/context-lake/sql', {
    key,
    method: 'POST',
    body: { query: 'SELECT 1' },
  });
  expect(res.status).toBe(504);
  expect(await res.json()).toMatchObject({ code: 'timeout' });
}, 20_000);
