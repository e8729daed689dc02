import { describe, expect, it } from '@jest/globals';
import type { ContextLakeStatus, Dataset } from '../../crds/context-lake/types.js';
import {
  statusWithEventCounts,
  tallyEvents,
} from '../../operator/context-lake/notifications/lake-counters.js';
import { matchingDatasets, notificationTargets } from '../../platform/lake-notifications/s3-events.js';
import type { S3ObjectEvent } from '../../platform/lake-notifications/s3-events.js';

const dataset = (
  name: string,
  from: string,
  notifications = true,
  params?: Record<string, string>,
): Dataset => ({
  name,
  from,
  notifications,
  params: { file_format: 'csv', ...params },
});

const event = (
  bucket: string,
  key: string,
  eventName = 'ObjectCreated:Put',
  at = '2026-11-22T10:00:00Z',
): S3ObjectEvent => ({
  bucket,
  key,
  eventName,
  eventTime: new Date(at),
});

const targets = notificationTargets([
  dataset('orders', 's3://lake-data/in/'),
  dataset('customers', 's3://lake-data/customers.csv'),
  dataset('everything', 's3://other-bucket/'),
  dataset('quiet', 's3://lake-data/quiet/', false),
  dataset('web', 'https://example.com/data.csv'),
]);

describe('notificationTargets', () => {
  it('keeps only S3 datasets with notifications, with their prefix or single key', () => {
    expect(targets).toEqual([
      { dataset: 'orders', bucket: 'lake-data', key: 'in/', isPrefix: true },
      { dataset: 'customers', bucket: 'lake-data', key: 'customers.csv', isPrefix: false },
      { dataset: 'everything', bucket: 'other-bucket', key: '', isPrefix: true },
    ]);
  });

  it('appends params.path to the key, as the lake loads it', () => {
    expect(notificationTargets([dataset('nested', 's3://lake-data/root/', true, { path: 'sub/' })])).toEqual([
      { dataset: 'nested', bucket: 'lake-data', key: 'root/sub/', isPrefix: true },
    ]);
  });
});

describe('matchingDatasets', () => {
  it.each([
    ['a key under the prefix', event('lake-data', 'in/2026/a.csv'), ['orders']],
    ['the single object itself', event('lake-data', 'customers.csv'), ['customers']],
    ['a key that only starts like the single object', event('lake-data', 'customers.csv.bak'), []],
    ['a key beside the prefix (prefix boundary)', event('lake-data', 'inbox/a.csv'), []],
    ['a key of a dataset without notifications', event('lake-data', 'quiet/a.csv'), []],
    ['the same key in another bucket', event('lake-data-2', 'in/a.csv'), []],
    ['any key of a whole-bucket dataset', event('other-bucket', 'deep/down/x.csv'), ['everything']],
  ])('%s', (_what, input, expected) => {
    expect(matchingDatasets(input, targets)).toEqual(expected);
  });
});

describe('tallyEvents', () => {
  it('counts matching data changes per dataset with the latest event time, and the rest as unmatched', () => {
    const tally = tallyEvents(
      [
        event('lake-data', 'in/a.csv', 'ObjectCreated:Put', '2026-11-22T10:00:02Z'),
        event('lake-data', 'in/b.csv', 'ObjectRemoved:Delete', '2026-11-22T10:00:01Z'),
        event('lake-data', 'customers.csv', 'ObjectCreated:Put', '2026-11-22T10:00:00Z'),
        event('lake-data', 'in/a.csv', 'ObjectTagging:Put', '2026-11-22T10:00:09Z'),
        event('lake-data', 'elsewhere/a.csv'),
      ],
      targets,
    );
    expect(tally.matched).toBe(3);
    expect(tally.unmatched).toBe(2);
    expect(Object.fromEntries(tally.datasets)).toEqual({
      orders: { count: 2, lastEventAt: new Date('2026-11-22T10:00:02Z') },
      customers: { count: 1, lastEventAt: new Date('2026-11-22T10:00:00Z') },
    });
  });
});

describe('statusWithEventCounts', () => {
  const before: ContextLakeStatus = {
    vmStatus: 'running',
    endpoint: 'http://127.0.0.1:1',
    datasets: {
      orders: {
        ok: true,
        status: 'ready',
        connectorId: 's3',
        notifications: true,
        s3EventCount: 5,
        s3LastEventAt: '2026-11-22T12:00:00.000Z',
      },
      other: { ok: true, status: 'ready', connectorId: 's3', notifications: false },
    },
  };

  it('adds to the counts, keeps the later event time and every field it does not own', () => {
    const after = statusWithEventCounts(
      before,
      new Map([['orders', { count: 2, lastEventAt: new Date('2026-11-22T11:00:00Z') }]]),
      new Date('2026-11-22T13:00:00Z'),
    );
    expect(after).toEqual({
      ...before,
      datasets: {
        ...before.datasets,
        orders: {
          ok: true,
          status: 'ready',
          connectorId: 's3',
          notifications: true,
          s3EventCount: 7,
          s3LastEventAt: '2026-11-22T12:00:00.000Z',
          s3LastRefreshAt: '2026-11-22T13:00:00.000Z',
        },
      },
    });
  });

  it('starts a pending entry for a dataset the lake reconciler has not written yet, without a refresh time', () => {
    const after = statusWithEventCounts(
      undefined,
      new Map([['orders', { count: 1, lastEventAt: new Date('2026-11-22T11:00:00Z') }]]),
      undefined,
    );
    expect(after.datasets).toEqual({
      orders: {
        ok: false,
        status: 'pending',
        connectorId: 's3',
        notifications: true,
        s3EventCount: 1,
        s3LastEventAt: '2026-11-22T11:00:00.000Z',
      },
    });
  });
});
