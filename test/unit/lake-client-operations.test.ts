import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { objectRefOf } from '../../cli/lake-client/operations.js';
import { renderTable } from '../../cli/lake-client/output.js';
import { agentryScript } from '../../runner/agentry-on-path.js';

describe('objectRefOf (--wait-for)', () => {
  it('reads s3://bucket/key, with an optional #etag', () => {
    expect(objectRefOf('s3://data/in/2026/a.parquet')).toEqual({ bucket: 'data', key: 'in/2026/a.parquet' });
    expect(objectRefOf('s3://data/a.csv#"9b2cf535"')).toEqual({
      bucket: 'data',
      key: 'a.csv',
      etag: '"9b2cf535"',
    });
  });

  it('takes any other value as the key (an https URL, a path below a file dataset)', () => {
    expect(objectRefOf('https://example.com/x.csv')).toEqual({ key: 'https://example.com/x.csv' });
  });

  it('refuses an s3 URL without a key', () => {
    expect(() => objectRefOf('s3://data')).toThrow(/s3:\/\/<bucket>\/<key>/);
  });
});

describe('renderTable', () => {
  it('pads columns and cuts long values to keep a row on one line', () => {
    const text = renderTable(
      ['city', 'note'],
      [
        { city: 'Oslo', note: 'x'.repeat(100) },
        { city: 'Lima', note: null },
      ],
    );
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^city {2}note/);
    expect(lines[2]).toMatch(/^Oslo {2}x{59}…$/);
    expect(lines[3]).toBe('Lima');
  });
});

describe('agentryScript', () => {
  it('starts the same node, flags and entry point with the arguments, whatever quotes they hold', async () => {
    const script = agentryScript(
      process.execPath,
      ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))'],
      "it's",
    );
    const { stdout } = await promisify(execFile)('sh', [
      '-c',
      script.replace('#!/bin/sh\n', ''),
      'agentry',
      'a b',
      "c'd",
    ]);
    expect(JSON.parse(stdout)).toEqual(["it's", 'a b', "c'd"]);
  });
});
