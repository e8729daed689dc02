import { describe, expect, it } from '@jest/globals';
import type { Dataset } from '../../crds/context-lake/types.js';
import {
  parseDatasetSource,
  secretReference,
  secretReferenceOf,
} from '../../platform/lake-config/dataset-source.js';
import type { Connector, DatasetIssue, DatasetSource } from '../../platform/lake-config/dataset-source.js';

const ALL: ReadonlySet<Connector> = new Set(['s3', 'https', 'file']);

function sourceOf(dataset: Dataset, connectors = ALL): DatasetSource {
  const parsed = parseDatasetSource(dataset, { connectors });
  if (!parsed.ok) throw new Error(`expected a valid dataset, got ${JSON.stringify(parsed.issues)}`);
  return parsed.source;
}

function issuesOf(dataset: Dataset, connectors = ALL): DatasetIssue[] {
  const parsed = parseDatasetSource(dataset, { connectors });
  if (parsed.ok) throw new Error('expected issues, the dataset was accepted');
  return parsed.issues;
}

const paths = (issues: DatasetIssue[]): string[] => issues.map((issue) => issue.path);

describe('S3 datasets', () => {
  it('reads a single object whose format shows in its name, public by default', () => {
    expect(sourceOf({ name: 'sales', from: 's3://acme-data/sales/2026.parquet' })).toMatchObject({
      connector: 's3',
      bucket: 'acme-data',
      key: 'sales/2026.parquet',
      isPrefix: false,
      format: 'parquet',
      auth: { mode: 'public' },
      notifications: false,
    });
  });

  it('reads every object under a prefix and then needs file_format', () => {
    expect(paths(issuesOf({ name: 'logs', from: 's3://acme-data/logs/' }))).toEqual(['params.file_format']);
    expect(
      sourceOf({ name: 'logs', from: 's3://acme-data/logs/', params: { file_format: 'json' } }),
    ).toMatchObject({ key: 'logs/', isPrefix: true, format: 'json' });
  });

  it('requires s3_key and s3_secret when s3_auth is key, naming each param', () => {
    const issues = issuesOf({
      name: 'sales',
      from: 's3://acme-data/sales.csv',
      params: { s3_auth: 'key' },
    });
    expect(issues).toEqual([
      { path: 'params.s3_key', message: 's3_key is required when s3_auth is key' },
      { path: 'params.s3_secret', message: 's3_secret is required when s3_auth is key' },
    ]);
  });

  it('counts a secret reference as a present credential', () => {
    const source = sourceOf({
      name: 'sales',
      from: 's3://acme-data/sales.csv',
      params: { s3_auth: 'key', s3_key: '${secrets:sales.s3_key}', s3_secret: '${secrets:sales.s3_secret}' },
    });
    expect(source).toMatchObject({ auth: { mode: 'key', accessKeyId: '${secrets:sales.s3_key}' } });
  });

  it('refuses credentials with the public and iam_role modes', () => {
    expect(
      paths(
        issuesOf({
          name: 'a',
          from: 's3://acme-data/a.csv',
          params: { s3_auth: 'iam_role', s3_key: 'AKIA' },
        }),
      ),
    ).toEqual(['params.s3_key']);
  });

  it('refuses an unknown param, naming it', () => {
    const issues = issuesOf({ name: 'a', from: 's3://acme-data/a.csv', params: { s3_bucket_owner: 'x' } });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('params.s3_bucket_owner');
    expect(issues[0]?.message).toContain('unknown param s3_bucket_owner');
  });

  it('needs allow_http for a plain-http endpoint', () => {
    const dataset: Dataset = {
      name: 'a',
      from: 's3://acme-data/a.csv',
      params: { s3_endpoint: 'http://127.0.0.1:9000' },
    };
    expect(paths(issuesOf(dataset))).toEqual(['params.allow_http']);
    expect(sourceOf({ ...dataset, params: { ...dataset.params, allow_http: 'true' } })).toMatchObject({
      endpoint: 'http://127.0.0.1:9000',
    });
  });

  it('checks booleans, durations, regions and formats', () => {
    const issues = issuesOf({
      name: 'a',
      from: 's3://acme-data/a',
      params: { allow_http: 'yes', client_timeout: 'soon', s3_region: 'US East', file_format: 'xlsx' },
    });
    expect(paths(issues).sort()).toEqual(
      ['params.allow_http', 'params.client_timeout', 'params.file_format', 'params.s3_region'].sort(),
    );
  });

  it('reads refresh_check_interval on every connector, and refuses one under 10s or malformed', () => {
    expect(
      sourceOf({ name: 'a', from: 's3://acme-data/a.csv', params: { refresh_check_interval: '5m' } }),
    ).toMatchObject({ checkIntervalMs: 300_000 });
    expect(
      sourceOf({ name: 'a', from: 'https://example.com/a.csv', params: { refresh_check_interval: '10s' } }),
    ).toMatchObject({ checkIntervalMs: 10_000 });
    for (const value of ['9s', 'often', '0s'])
      expect(
        issuesOf({ name: 'a', from: 'file:///data/a.csv', params: { refresh_check_interval: value } }),
      ).toEqual([
        {
          path: 'params.refresh_check_interval',
          message: 'refresh_check_interval must be a duration of at least 10s, such as 5m',
        },
      ]);
  });

  it('joins path under the URI and refuses traversal in it', () => {
    expect(sourceOf({ name: 'a', from: 's3://acme-data/base', params: { path: 'x/y.csv' } })).toMatchObject({
      key: 'base/x/y.csv',
      format: 'csv',
    });
    expect(
      paths(issuesOf({ name: 'a', from: 's3://acme-data/base/', params: { path: '../z.csv' } })),
    ).toContain('params.path');
  });

  it('refuses a malformed bucket', () => {
    expect(paths(issuesOf({ name: 'a', from: 's3://A_B/x.csv' }))).toEqual(['from']);
  });

  it('keeps the notifications flag', () => {
    expect(sourceOf({ name: 'a', from: 's3://acme-data/a.csv', notifications: true })).toMatchObject({
      notifications: true,
    });
  });
});

describe('https and file datasets', () => {
  it('reads an https URL with its format from the path', () => {
    expect(sourceOf({ name: 'a', from: 'https://example.com/data/a.json?v=2' })).toMatchObject({
      connector: 'https',
      format: 'json',
    });
  });

  it('refuses notifications on a non-S3 dataset', () => {
    expect(paths(issuesOf({ name: 'a', from: 'https://example.com/a.csv', notifications: true }))).toEqual([
      'notifications',
    ]);
  });

  it('refuses S3 params on https', () => {
    expect(
      paths(issuesOf({ name: 'a', from: 'https://example.com/a.csv', params: { s3_region: 'x' } })),
    ).toEqual(['params.s3_region']);
  });

  it('reads an absolute file path and refuses traversal', () => {
    expect(sourceOf({ name: 'a', from: 'file:///srv/data/a.csv' })).toMatchObject({
      connector: 'file',
      path: '/srv/data/a.csv',
      isDirectory: false,
    });
    expect(paths(issuesOf({ name: 'a', from: 'file:///srv/../etc/passwd.csv' }))).toEqual(['from']);
    expect(paths(issuesOf({ name: 'a', from: 'file://relative.csv' }))).toEqual(['from']);
  });

  it('refuses a connector the installation does not enable', () => {
    const issues = issuesOf({ name: 'a', from: 'file:///srv/a.csv' }, new Set(['s3', 'https']));
    expect(issues).toEqual([
      { path: 'from', message: 'the file connector is not enabled on this installation' },
    ]);
  });

  it('refuses an unknown scheme', () => {
    expect(paths(issuesOf({ name: 'a', from: 'gs://bucket/a.csv' }))).toEqual(['from']);
  });
});

describe('secret references', () => {
  it('round-trips a key', () => {
    expect(secretReferenceOf(secretReference('sales.s3_secret'))).toBe('sales.s3_secret');
  });

  it('treats anything else as a literal', () => {
    expect(secretReferenceOf('plain')).toBeUndefined();
    expect(secretReferenceOf('${secrets:}')).toBeUndefined();
    expect(secretReferenceOf('x${secrets:a}')).toBeUndefined();
    expect(secretReferenceOf('${secrets:a/b}')).toBeUndefined();
  });
});
