import { describe, expect, it } from '@jest/globals';
import { refreshRequestOf } from '../../operator/context-lake/notifications/object-changes.js';
import { RefreshRequestSchema } from '../../platform/lake-protocol.js';
import { notificationTargets } from '../../platform/lake-notifications/s3-events.js';
import type { S3ObjectEvent } from '../../platform/lake-notifications/s3-events.js';

const targets = notificationTargets([
  { name: 'orders', from: 's3://lake-data/in/', notifications: true, params: { file_format: 'csv' } },
  { name: 'all', from: 's3://lake-data/', notifications: true, params: { file_format: 'csv' } },
  { name: 'single', from: 's3://lake-data/one.csv', notifications: true },
]);

const AT = new Date('2026-11-22T21:20:00.123Z');

const created = (key: string, extra: Partial<S3ObjectEvent> = {}): S3ObjectEvent => ({
  eventName: 'ObjectCreated:Put',
  eventTime: AT,
  bucket: 'lake-data',
  key,
  eTag: 'e1',
  size: 10,
  sequencer: '0A',
  ...extra,
});

describe('refreshRequestOf', () => {
  it('turns a created object into a change with its ETag, size, sequencer and time, per dataset it concerns', () => {
    expect(refreshRequestOf([created('in/a.csv')], targets)).toEqual({
      datasets: ['all', 'orders'],
      changes: ['orders', 'all'].map((dataset) => ({
        dataset,
        event: 'created',
        bucket: 'lake-data',
        key: 'in/a.csv',
        etag: 'e1',
        size: 10,
        sequencer: '0A',
        eventTime: AT.toISOString(),
      })),
    });
  });

  it('turns removals and lifecycle expirations into removed changes, without ETag or size', () => {
    const request = refreshRequestOf(
      [
        created('one.csv', { eventName: 'ObjectRemoved:Delete' }),
        created('one.csv', { eventName: 'LifecycleExpiration:Delete', sequencer: '0B' }),
      ],
      [targets[2]!],
    );
    expect(
      request.changes?.map(({ event, etag, size, sequencer }) => ({ event, etag, size, sequencer })),
    ).toEqual([
      { event: 'removed', etag: undefined, size: undefined, sequencer: '0A' },
      { event: 'removed', etag: undefined, size: undefined, sequencer: '0B' },
    ]);
  });

  it('sends no changes for a dataset one of whose events the protocol cannot carry, so the lake compares its source', () => {
    const request = refreshRequestOf(
      [created('in/a.csv'), created('in/b.csv', { eTag: 'x'.repeat(300) })],
      [targets[0]!],
    );
    expect(request).toEqual({ datasets: ['orders'] });
  });

  it('leaves events that change no data out of the request', () => {
    expect(refreshRequestOf([created('in/a.csv', { eventName: 'ObjectTagging:Put' })], targets)).toEqual({
      datasets: [],
    });
  });

  it('falls back to a plain refresh when a flood of events exceeds the protocol’s changes', () => {
    const events = Array.from({ length: 10_001 }, (_, i) => created(`in/${i}.csv`));
    const request = refreshRequestOf(events, [targets[0]!]);
    expect(request).toEqual({ datasets: ['orders'] });
    expect(RefreshRequestSchema.safeParse(request).success).toBe(true);
  });
});
