import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DATABASE_FILE, LakeEngine } from '../../lake/engine.js';

// DuckDB's own lockdown, below the server's read-only statement check: these statements run on a
// plain connection of the locked engine, as SQL would if that check had a hole.

let dir: string;
let engine: LakeEngine;

const run = (sql: string) => engine.withConnection((connection) => connection.runAndReadAll(sql));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-lake-engine-'));
  engine = await LakeEngine.open({ dataDir: join(dir, 'lake'), memoryLimit: '256MB', threads: 1 });
});

afterAll(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

describe('lake engine lockdown (DuckDB settings alone)', () => {
  const out = () => join(dir, `escape-${randomBytes(4).toString('hex')}`);

  it.each([
    ["read_csv('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')", /Permission Error/],
    ["read_text('/etc/passwd')", "SELECT * FROM read_text('/etc/passwd')", /Permission Error/],
    ['glob outside staging', "SELECT * FROM glob('/etc/*')", /Permission Error/],
    ['INSTALL httpfs', 'INSTALL httpfs', /Permission Error/],
    ['LOAD httpfs', 'LOAD httpfs', /Permission Error|disabled/],
    ['SET enable_external_access=true', 'SET enable_external_access=true', /configuration has been locked/],
    ['SET lock_configuration=false', 'SET lock_configuration=false', /configuration has been locked/],
    ['SET allowed_directories', "SET allowed_directories=['/']", /configuration has been locked/],
    [
      'a path that climbs out of staging',
      "SELECT * FROM read_text('STAGING/../../../etc/passwd')",
      /Permission Error/,
    ],
  ])('refuses %s', async (_name, sql, error) => {
    await expect(run(sql.replace('STAGING', engine.stagingDir))).rejects.toThrow(error);
  });

  it('refuses COPY TO and ATTACH outside staging and writes no file', async () => {
    const target = out();
    await expect(run(`COPY (SELECT 1) TO '${target}.csv'`)).rejects.toThrow(/Permission Error/);
    await expect(run(`ATTACH '${target}.db'`)).rejects.toThrow(/Permission Error/);
    expect(existsSync(`${target}.csv`)).toBe(false);
    expect(existsSync(`${target}.db`)).toBe(false);
  });

  it('keeps SQL from writing or attaching the database file, and from reading beside it', async () => {
    // DuckDB lets SQL read its own file and WAL (they hold what SQL reads through the tables
    // anyway) and, while no WAL exists, even create the WAL: the server's read-only statement
    // check stops COPY (test/integration/lake-server.test.ts), not these settings.
    const file = join(dir, 'lake', DATABASE_FILE);
    expect(existsSync(file)).toBe(true);
    await writeFile(join(dir, 'lake', 'beside.txt'), 'not for SQL');
    await expect(run(`SELECT * FROM read_text('${join(dir, 'lake', 'beside.txt')}')`)).rejects.toThrow(
      /Permission Error/,
    );
    await expect(run(`COPY (SELECT 1) TO '${file}'`)).rejects.toThrow(/Permission Error/);
    await expect(run(`ATTACH '${file}' AS again (READ_ONLY)`)).rejects.toThrow(
      /Permission Error|already attached/,
    );
    expect(await run('SELECT 42 AS still').then((reader) => reader.getRowObjectsJson())).toEqual([
      { still: 42 },
    ]);
  });

  it('keeps the configured limits, which SQL cannot change', async () => {
    const reader = await run(
      "SELECT current_setting('threads') AS threads, current_setting('enable_external_access') AS ext",
    );
    expect(reader.getRowObjectsJson()).toEqual([{ threads: '1', ext: false }]);
  });

  it('still loads files the lake puts in its staging directory, after the lockdown', async () => {
    // A download lands in staging (written here by another, unlocked DuckDB, as a pipeline would).
    const writer = await DuckDBInstance.create(':memory:');
    const connection = await writer.connect();
    await connection.run(
      `COPY (SELECT range AS n FROM range(5)) TO '${engine.stagingDir}/numbers.parquet' (FORMAT parquet)`,
    );
    connection.closeSync();
    writer.closeSync();
    await engine.run(
      `CREATE TABLE from_file AS SELECT * FROM read_parquet('${engine.stagingDir}/numbers.parquet')`,
    );
    expect(await engine.rows('SELECT count(*)::INTEGER AS n FROM from_file')).toEqual([{ n: 5 }]);
  });
});
