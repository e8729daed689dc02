// AGENTRY_LAKE_SPILL_LIMIT reaches DuckDB: the engine sets max_temp_directory_size before it locks
// its configuration, so a query cannot spill more than the lake's share of its disk.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LakeEngine } from '../../lake/engine.js';

let dir: string;
let engine: LakeEngine;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-spill-'));
  engine = await LakeEngine.open({ dataDir: dir, memoryLimit: '256MB', threads: 1, spillLimit: '64MiB' });
});
afterAll(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

it('caps the spill directory at the configured size, and SQL cannot raise it', async () => {
  const setting = await engine.withConnection(async (connection) => {
    const reader = await connection.runAndReadAll("SELECT current_setting('max_temp_directory_size')");
    return String(reader.getRows()[0]?.[0]);
  });
  expect(setting).toMatch(/^6[47](\.\d+)? ?(MiB|MB)$/);
  await expect(
    engine.withConnection((connection) => connection.run("SET max_temp_directory_size = '1TB'")),
  ).rejects.toThrow(/lock|configuration/i);
});
