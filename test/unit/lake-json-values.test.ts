import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isoDate, isoInstant } from '../../lake/iso-time.js';
import { RowEncoder } from '../../lake/json-values.js';
import type { JsonRow } from '../../lake/json-values.js';

// Values come from a real DuckDB (in memory): the converter sees exactly what a query gives it.

let instance: DuckDBInstance;
let connection: DuckDBConnection;

async function rowsOf(sql: string): Promise<JsonRow[]> {
  const result = await connection.stream(sql);
  const encoder = new RowEncoder(result.deduplicatedColumnNames(), result.columnTypes());
  const rows: JsonRow[] = [];
  for (
    let chunk = await result.fetchChunk();
    chunk !== null && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  )
    encoder.encode(chunk, Number.MAX_SAFE_INTEGER, rows);
  return rows;
}

const one = async (expression: string): Promise<unknown> => (await rowsOf(`SELECT ${expression} AS v`))[0]?.v;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  await connection.run("SET TimeZone = 'Europe/Berlin'"); // TIMESTAMPTZ must still come back in UTC
});

afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

describe('lake JSON values: integers', () => {
  it.each([
    ['a safe BIGINT as a number', '(2::BIGINT ^ 53 - 1)::BIGINT', 9007199254740991],
    ['a BIGINT beyond 2^53 as a string', '(1::BIGINT << 60)', '1152921504606846976'],
    ['a negative BIGINT beyond -2^53 as a string', '-(1::BIGINT << 60)', '-1152921504606846976'],
    ['the largest UBIGINT as a string', '18446744073709551615::UBIGINT', '18446744073709551615'],
    [
      'a HUGEINT as a string',
      '170141183460469231731687303715884105727::HUGEINT',
      '170141183460469231731687303715884105727',
    ],
    ['a small HUGEINT as a number', '12::HUGEINT', 12],
    ['an INTEGER as a number', '-7::INTEGER', -7],
  ])('%s', async (_name, expression, expected) => {
    expect(await one(expression)).toEqual(expected);
  });
});

describe('lake JSON values: fractions', () => {
  it.each([
    ['a DECIMAL as a number', '12.345::DECIMAL(10,3)', 12.345],
    ['a wide DECIMAL that a double holds as a number', '22.50::DECIMAL(38,2)', 22.5],
    [
      'a wide DECIMAL a double would change as a string',
      '123456789012345678.123::DECIMAL(38,3)',
      '123456789012345678.123',
    ],
    ['a FLOAT by its shortest spelling', '0.1::FLOAT', 0.1],
    ['NaN as a string', "'nan'::DOUBLE", 'NaN'],
    ['Infinity as a string', "'inf'::DOUBLE", 'Infinity'],
    ['-Infinity as a string', "'-inf'::FLOAT", '-Infinity'],
  ])('%s', async (_name, expression, expected) => {
    expect(await one(expression)).toEqual(expected);
  });
});

describe('lake JSON values: time', () => {
  it.each([
    ['a DATE as YYYY-MM-DD', "DATE '2024-02-29'", '2024-02-29'],
    ['an infinite DATE as a word', "'infinity'::DATE", 'infinity'],
    ['a TIMESTAMP as ISO 8601 with Z', "TIMESTAMP '2024-01-02 03:04:05'", '2024-01-02T03:04:05.000Z'],
    ['microseconds kept', "TIMESTAMP '2024-01-02 03:04:05.123456'", '2024-01-02T03:04:05.123456Z'],
    ['a TIMESTAMP before 1970', "TIMESTAMP '1969-12-31 23:59:59.999999'", '1969-12-31T23:59:59.999999Z'],
    ['a TIMESTAMPTZ in UTC', "TIMESTAMPTZ '2024-01-02 03:04:05+02'", '2024-01-02T01:04:05.000Z'],
    [
      'a TIMESTAMP_NS with its nanoseconds',
      "TIMESTAMP_NS '2024-01-02 03:04:05.123456789'",
      '2024-01-02T03:04:05.123456789Z',
    ],
    ['a TIMESTAMP_S', "TIMESTAMP_S '2024-01-02 03:04:05'", '2024-01-02T03:04:05.000Z'],
    ['a TIMESTAMP_MS', "TIMESTAMP_MS '2024-01-02 03:04:05.678'", '2024-01-02T03:04:05.678Z'],
    ['a TIME as text', "TIME '12:34:56'", '12:34:56'],
    ['an INTERVAL as text', "INTERVAL '1 year 2 days 3 seconds'", '1 year 2 days 00:00:03'],
  ])('%s', async (_name, expression, expected) => {
    expect(await one(expression)).toEqual(expected);
  });
});

describe('lake JSON values: other types', () => {
  it.each([
    [
      'a BLOB as base64',
      "'\\xFF\\x00abc'::BLOB",
      Buffer.from([0xff, 0x00, 0x61, 0x62, 0x63]).toString('base64'),
    ],
    [
      'a UUID as text',
      "'5f3f0d2c-2d5e-4d3b-9a57-0f1e2d3c4b5a'::UUID",
      '5f3f0d2c-2d5e-4d3b-9a57-0f1e2d3c4b5a',
    ],
    ['a LIST as an array, its BIGINTs safe', '[1, 2, (1::BIGINT << 60)]', [1, 2, '1152921504606846976']],
    [
      'a STRUCT as an object',
      "{'x': 1, 'y': [true, NULL], 'd': DATE '2024-01-01'}",
      { x: 1, y: [true, null], d: '2024-01-01' },
    ],
    ['a MAP as an object', "MAP {'a': 1.5::DOUBLE, 'b': 'nan'::DOUBLE}", { a: 1.5, b: 'NaN' }],
    ['a MAP with integer keys by their text', 'MAP {1: true}', { '1': true }],
    ['an ARRAY as an array', '[1, 2]::INTEGER[2]', [1, 2]],
    ['a NULL as null', 'NULL::INTEGER', null],
    ['an ENUM as its label', "'b'::ENUM('a', 'b')", 'b'],
  ])('%s', async (_name, expression, expected) => {
    expect(await one(expression)).toEqual(expected);
  });
});

describe('lake JSON values: rows', () => {
  it('keys rows by column name, duplicates renamed as DuckDB does, __proto__ kept as a plain key', async () => {
    const rows = await rowsOf('SELECT 1 AS a, 2 AS a, 3 AS "__proto__"');
    expect(JSON.parse(JSON.stringify(rows))).toEqual([{ a: 1, 'a:1': 2, ['__proto__']: 3 }]);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
  });

  it('converts only the rows asked for', async () => {
    const result = await connection.stream('SELECT range AS n FROM range(3000)');
    const encoder = new RowEncoder(result.deduplicatedColumnNames(), result.columnTypes());
    const rows: JsonRow[] = [];
    const chunk = await result.fetchChunk();
    if (chunk !== null) encoder.encode(chunk, 5, rows);
    expect(rows).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });
});

describe('lake ISO time text', () => {
  it('writes every date of years 0000 to 9999 as Date.toISOString does', () => {
    // Every 7th day over ten thousand years, and each day of a leap-year span around 2000.
    const days = [-719_528, 2_932_896, 0, -1, 11_016, 11_017, 11_018];
    for (let day = -719_528; day <= 2_932_896; day += 7) days.push(day);
    for (let day = 10_900; day < 11_400; day++) days.push(day);
    // One expect over the mismatches: half a million expect calls took a minute.
    const wrong = days
      .map((day) => ({ day, got: isoDate(day), want: new Date(day * 86_400_000).toISOString().slice(0, 10) }))
      .filter(({ got, want }) => got !== want);
    expect(wrong).toEqual([]);
  });

  it('writes years beyond four digits in the expanded form', () => {
    expect(isoDate(-719_529)).toBe('-000001-12-31');
    expect(isoDate(2_932_897)).toBe('+010000-01-01');
  });

  it('writes instants as Date.toISOString does, before 1970 too, with the digits below a millisecond', () => {
    for (let ms = -62_000_000_000_000; ms < 253_000_000_000_000; ms += 987_654_321_123)
      expect(isoInstant(ms)).toBe(new Date(ms).toISOString());
    expect(isoInstant(-1)).toBe('1969-12-31T23:59:59.999Z');
    expect(isoInstant(1_700_000_000_123, 456, 3)).toBe('2023-11-14T22:13:20.123456Z');
    expect(isoInstant(1_700_000_000_123, 7, 6)).toBe('2023-11-14T22:13:20.123000007Z');
  });
});
