// The lake console's paging (web/src/pages/lake/sql-paging.ts): later rows of a truncated answer come
// from the query run again inside `SELECT * FROM (…) OFFSET n`. Run on a real DuckDB (in memory), the
// lake's engine, so the rewritten statement is known to parse and to skip exactly n rows.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFromOffset } from '../../web/src/pages/lake/sql-paging.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;

async function numbers(sql: string): Promise<number[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjects().map((row) => Number(row.n));
}

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});

afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

describe('lake console paging', () => {
  it('runs the query as written for the first rows', () => {
    expect(queryFromOffset('EXPLAIN SELECT 1;', 0)).toBe('EXPLAIN SELECT 1;');
  });

  it('skips the rows already shown, keeping the query’s order', async () => {
    expect(await numbers(queryFromOffset('SELECT range AS n FROM range(10) ORDER BY n DESC', 7))).toEqual([
      2, 1, 0,
    ]);
  });

  it('drops trailing semicolons, which would end the statement inside the parentheses', async () => {
    expect(await numbers(queryFromOffset('SELECT range AS n FROM range(5) ORDER BY n;  ;\n', 3))).toEqual([
      3, 4,
    ]);
  });

  it('keeps a trailing line comment from swallowing the closing parenthesis', async () => {
    const query = 'SELECT range AS n FROM range(4) ORDER BY n -- the numbers';
    expect(await numbers(queryFromOffset(query, 2))).toEqual([2, 3]);
  });
});
