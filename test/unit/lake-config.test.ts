import { describe, expect, it } from '@jest/globals';
import { loadLakeConfig } from '../../lake/config.js';
import { localPath, readSql } from '../../lake/load.js';
import {
  cgroupCpuLimit,
  cgroupMemoryLimit,
  defaultMemoryLimit,
  defaultThreads,
} from '../../lake/resources.js';
import { definitionOf } from '../../lake/dataset-definition.js';
import { compareSequencers, sameVersion } from '../../lake/refresh-plan.js';
import { ConfigError } from '../../platform/config.js';
import type { DatasetSource } from '../../platform/lake-config/dataset-source.js';

const TOKEN = 't'.repeat(32);
const GIB = 1024 ** 3;

describe('lake configuration (environment)', () => {
  it('applies the documented defaults', () => {
    const config = loadLakeConfig({ AGENTRY_LAKE_TOKEN: TOKEN });
    expect(config).toMatchObject({
      AGENTRY_LAKE_PORT: 8710,
      AGENTRY_LAKE_HOST: '0.0.0.0',
      AGENTRY_LAKE_DATA_DIR: '/var/lib/agentry-lake',
      AGENTRY_LAKE_QUERY_TIMEOUT: 120_000,
      AGENTRY_LAKE_ROW_LIMIT: 10_000,
      AGENTRY_LAKE_FILE_ROOTS: [],
      AGENTRY_LAKE_PRIVATE_TARGETS: false,
      AGENTRY_LAKE_MAX_RESULT_BYTES: 64 * 1024 * 1024,
      AGENTRY_LOG_LEVEL: 'info',
    });
    expect([...config.AGENTRY_LAKE_CONNECTORS]).toEqual(['s3', 'https']);
    expect(config.AGENTRY_LAKE_MEMORY_LIMIT).toMatch(/^\d+MiB$/);
    expect(config.AGENTRY_LAKE_THREADS).toBeGreaterThanOrEqual(1);
  });

  it('reads every variable', () => {
    const config = loadLakeConfig({
      AGENTRY_LAKE_TOKEN: TOKEN,
      AGENTRY_LAKE_PORT: '0',
      AGENTRY_LAKE_MEMORY_LIMIT: '3GB',
      AGENTRY_LAKE_THREADS: '3',
      AGENTRY_LAKE_QUERY_TIMEOUT: '1m30s',
      AGENTRY_LAKE_ROW_LIMIT: '50',
      AGENTRY_LAKE_CONNECTORS: 's3, file',
      AGENTRY_LAKE_FILE_ROOTS: '/srv/org-a, /srv/shared/',
      AGENTRY_LAKE_PRIVATE_TARGETS: 'true',
      AGENTRY_LAKE_MAX_RESULT_BYTES: '1048576',
    });
    expect(config).toMatchObject({
      AGENTRY_LAKE_FILE_ROOTS: ['/srv/org-a', '/srv/shared'],
      AGENTRY_LAKE_PRIVATE_TARGETS: true,
      AGENTRY_LAKE_MAX_RESULT_BYTES: 1_048_576,
      AGENTRY_LAKE_PORT: 0,
      AGENTRY_LAKE_MEMORY_LIMIT: '3GB',
      AGENTRY_LAKE_THREADS: 3,
      AGENTRY_LAKE_QUERY_TIMEOUT: 90_000,
      AGENTRY_LAKE_ROW_LIMIT: 50,
    });
    expect([...config.AGENTRY_LAKE_CONNECTORS]).toEqual(['s3', 'file']);
  });

  it.each([
    ['a missing token', {}, /AGENTRY_LAKE_TOKEN: is required/],
    ['a short token', { AGENTRY_LAKE_TOKEN: 'short' }, /AGENTRY_LAKE_TOKEN: must be at least 32 characters/],
    [
      'a memory limit without a unit',
      { AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_MEMORY_LIMIT: '3' },
      /AGENTRY_LAKE_MEMORY_LIMIT/,
    ],
    [
      'a timeout that is no duration',
      { AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_QUERY_TIMEOUT: '2 minutes' },
      /AGENTRY_LAKE_QUERY_TIMEOUT/,
    ],
    [
      'a zero timeout',
      { AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_QUERY_TIMEOUT: '0s' },
      /AGENTRY_LAKE_QUERY_TIMEOUT/,
    ],
    [
      'a relative file root',
      { AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_FILE_ROOTS: 'data/files' },
      /AGENTRY_LAKE_FILE_ROOTS: file roots must be absolute/,
    ],
    [
      'an unknown connector',
      { AGENTRY_LAKE_TOKEN: TOKEN, AGENTRY_LAKE_CONNECTORS: 'ftp' },
      /AGENTRY_LAKE_CONNECTORS/,
    ],
  ])('refuses %s with a ConfigError naming the variable', (_name, env, message) => {
    expect(() => loadLakeConfig(env)).toThrow(ConfigError);
    expect(() => loadLakeConfig(env)).toThrow(message);
  });

  it('never quotes a bad token in its error', () => {
    expect(() => loadLakeConfig({ AGENTRY_LAKE_TOKEN: 'secret-but-short' })).not.toThrow(/secret-but-short/);
  });
});

describe('lake resources', () => {
  const files = (contents: Record<string, string>) => (path: string) => contents[path] ?? '';

  it('reads the cgroup v2 memory limit', () => {
    expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': '4294967296\n' }))).toBe(4 * GIB);
  });

  it('treats "max" and cgroup v1 "no limit" as unlimited', () => {
    expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeUndefined();
    const v1 = files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' });
    expect(cgroupMemoryLimit(v1)).toBeUndefined();
  });

  it('reads the CPU quota of cgroup v2 and v1, rounding up to whole CPUs', () => {
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': '150000 100000\n' }))).toBe(2);
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' }))).toBeUndefined();
    const v1 = {
      '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '400000',
      '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000',
    };
    expect(cgroupCpuLimit(files(v1))).toBe(4);
    expect(cgroupCpuLimit(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1' }))).toBeUndefined();
  });

  it('defaults threads to the CPU limit, never more than the CPUs there are', () => {
    expect(defaultThreads(2, 16)).toBe(2);
    expect(defaultThreads(undefined, 16)).toBe(16);
    expect(defaultThreads(8, 4)).toBe(4);
  });

  it('defaults memory_limit to three quarters of the smaller of the cgroup limit and total memory', () => {
    expect(defaultMemoryLimit(4 * GIB, 64 * GIB)).toBe('3072MiB');
    expect(defaultMemoryLimit(undefined, 8 * GIB)).toBe('6144MiB');
  });
});

describe('lake loading: local files and the SQL that reads them', () => {
  const s3 = (overrides: Partial<DatasetSource> = {}): DatasetSource =>
    ({
      connector: 's3',
      bucket: 'b',
      key: 'sales/',
      isPrefix: true,
      format: 'csv',
      auth: { mode: 'public' },
      hivePartitioning: false,
      notifications: false,
      ...overrides,
    }) as DatasetSource;
  const object = (relative: string) => ({
    display: `s3://b/sales/${relative}`,
    relative,
    download: () => Promise.resolve(),
  });

  it('names a file by its index, so characters of the key are never glob patterns to DuckDB', () => {
    expect(localPath('/s', object('2024/[draft]*.csv'), 3, s3())).toBe('/s/3.csv');
  });

  it('keeps a compression suffix that DuckDB detects', () => {
    expect(localPath('/s', object('day.csv.gz'), 0, s3())).toBe('/s/0.csv.gz');
  });

  it('keeps key=value folders with hive partitioning, without climbing out', () => {
    const source = s3({ hivePartitioning: true, format: 'parquet' });
    expect(localPath('/s', object('year=2024/month=01/part.parquet'), 1, source)).toBe(
      '/s/year=2024/month=01/1.parquet',
    );
    expect(localPath('/s', object('../../etc/x.parquet'), 2, source)).toBe('/s/etc/2.parquet');
  });

  it('reads a list of files with the format reader and quotes each path', () => {
    expect(readSql(['/s/0.csv', "/s/it's.csv"], s3())).toBe(
      "SELECT * FROM read_csv(['/s/0.csv', '/s/it''s.csv'], auto_detect = true, union_by_name = true, hive_partitioning = false)",
    );
  });

  it('tells dataset definitions apart by source and params, not by param order or notifications', () => {
    const a = definitionOf({
      name: 'd',
      from: 's3://b/k.csv',
      params: { s3_region: 'x', s3_auth: 'public' },
    });
    const b = definitionOf({
      name: 'd',
      from: 's3://b/k.csv',
      params: { s3_auth: 'public', s3_region: 'x' },
      notifications: true,
    });
    const c = definitionOf({
      name: 'd',
      from: 's3://b/k.csv',
      params: { s3_auth: 'public', s3_region: 'y' },
    });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('leaves refresh_check_interval out of a definition: a new interval reloads nothing', () => {
    const from = 's3://b/k.csv';
    expect(definitionOf({ name: 'd', from, params: { refresh_check_interval: '1m' } })).toBe(
      definitionOf({ name: 'd', from, params: { refresh_check_interval: '5m' } }),
    );
  });
});

describe('lake refresh: object versions and event order', () => {
  it('orders S3 sequencers of different lengths as hex numbers', () => {
    expect(compareSequencers('0055AED6DCD90281E5', '0055AED6DCD90281E6')).toBeLessThan(0);
    expect(compareSequencers('55AED6DCD90281E5', '0055aed6dcd90281e5')).toBe(0);
    expect(compareSequencers('0100', 'FF')).toBeGreaterThan(0);
  });

  it('compares versions by ETag, else by LastModified and size, and calls unknown changed', () => {
    const at = '2026-11-26T00:00:00.000Z';
    expect(sameVersion({ etag: 'a', size: 1 }, { etag: 'a', size: 2 })).toBe(true);
    expect(sameVersion({ etag: 'a' }, { etag: 'b' })).toBe(false);
    expect(sameVersion({ lastModified: at, size: 3 }, { lastModified: at, size: 3 })).toBe(true);
    expect(sameVersion({ lastModified: at, size: 3 }, { lastModified: at, size: 4 })).toBe(false);
    expect(sameVersion({}, {})).toBe(false);
  });
});
