import { describe, expect, it } from '@jest/globals';
import {
  changesData,
  decodeObjectKey,
  decodeS3Message,
} from '../../platform/lake-notifications/s3-events.js';
import type { DecodedMessage, S3ObjectEvent } from '../../platform/lake-notifications/s3-events.js';

/** A record as AWS (and moto) writes it, with only the fields we read and a few we ignore. */
const record = (
  key: string,
  overrides: { eventName?: string; eventTime?: string; bucket?: string } = {},
) => ({
  eventVersion: '2.1',
  eventSource: 'aws:s3',
  awsRegion: 'us-east-1',
  eventTime: overrides.eventTime ?? '2026-11-22T21:20:00.123Z',
  eventName: overrides.eventName ?? 'ObjectCreated:Put',
  s3: {
    s3SchemaVersion: '1.0',
    configurationId: 'agentry-context-lake',
    bucket: { name: overrides.bucket ?? 'lake-data', arn: 'arn:aws:s3:::lake-data' },
    object: { key, size: 6, eTag: 'abc', sequencer: '0055AED6DCD90281E5' },
  },
});

const body = (...records: unknown[]): string => JSON.stringify({ Records: records });

function eventsOf(decoded: DecodedMessage): S3ObjectEvent[] {
  if (decoded.kind !== 'events') throw new Error(`expected events, got ${JSON.stringify(decoded)}`);
  return decoded.events;
}

/** What record('in/orders.csv') decodes to, without the details each test checks. */
const ORDERS_EVENT = {
  eventName: 'ObjectCreated:Put',
  eventTime: new Date('2026-11-22T21:20:00.123Z'),
  bucket: 'lake-data',
  key: 'in/orders.csv',
};

describe('decodeS3Message', () => {
  it('decodes a record into bucket, URL-decoded key, event name and time, ETag, size and sequencer', () => {
    const [event] = eventsOf(decodeS3Message(body(record('in/orders.csv'))));
    expect(event).toEqual({ ...ORDERS_EVENT, eTag: 'abc', size: 6, sequencer: '0055AED6DCD90281E5' });
  });

  it('leaves out an odd ETag, size or sequencer instead of dropping the event', () => {
    const odd = record('in/orders.csv');
    odd.s3.object = { ...odd.s3.object, size: -1, sequencer: 'not hex' };
    const [event] = eventsOf(decodeS3Message(body(odd)));
    expect(event).toEqual({ ...ORDERS_EVENT, eTag: 'abc' });
  });

  it('decodes a removal record, which carries no ETag nor size', () => {
    const removed = record('in/orders.csv', { eventName: 'ObjectRemoved:Delete' });
    const [event] = eventsOf(
      decodeS3Message(
        body({ ...removed, s3: { ...removed.s3, object: { key: 'in/orders.csv', sequencer: '0A' } } }),
      ),
    );
    expect(event).toEqual({ ...ORDERS_EVENT, eventName: 'ObjectRemoved:Delete', sequencer: '0A' });
  });

  it('decodes keys with an encoded slash, as moto sends them', () => {
    const [event] = eventsOf(decodeS3Message(body(record('in%2Fsub%2Fa.txt'))));
    expect(event?.key).toBe('in/sub/a.txt');
  });

  it('decodes + as a space and %2B as a plus', () => {
    const [event] = eventsOf(decodeS3Message(body(record('in/my+file%2Bv2.csv'))));
    expect(event?.key).toBe('in/my file+v2.csv');
  });

  it('decodes percent-encoded unicode keys', () => {
    const [event] = eventsOf(decodeS3Message(body(record('in/caf%C3%A9%20%E6%97%A5%E6%9C%AC.csv'))));
    expect(event?.key).toBe('in/café 日本.csv');
  });

  it('reads an eventTime without a zone designator as UTC (moto)', () => {
    const [event] = eventsOf(
      decodeS3Message(body(record('a.csv', { eventTime: '2026-11-22T21:20:00.123456' }))),
    );
    expect(event?.eventTime.toISOString()).toBe('2026-11-22T21:20:00.123Z');
  });

  it('keeps every record of a message in order', () => {
    const events = eventsOf(
      decodeS3Message(body(record('a.csv'), record('b.csv', { eventName: 'ObjectRemoved:Delete' }))),
    );
    expect(events.map((event) => [event.key, event.eventName])).toEqual([
      ['a.csv', 'ObjectCreated:Put'],
      ['b.csv', 'ObjectRemoved:Delete'],
    ]);
  });

  it('recognizes the s3:TestEvent sent when a notification is configured', () => {
    const test = JSON.stringify({
      Service: 'Amazon S3',
      Event: 's3:TestEvent',
      Time: '2026-11-22T21:20:00.000Z',
      Bucket: 'lake-data',
      RequestId: 'x',
      HostId: 'y',
    });
    expect(decodeS3Message(test)).toEqual({ kind: 'test' });
  });

  it('unwraps an S3 event delivered through an SNS topic', () => {
    const envelope = JSON.stringify({
      Type: 'Notification',
      MessageId: 'm',
      TopicArn: 'arn:aws:sns:us-east-1:123456789012:lake',
      Message: body(record('in/a.csv')),
    });
    expect(eventsOf(decodeS3Message(envelope)).map((event) => event.key)).toEqual(['in/a.csv']);
  });

  it.each([
    ['a body that is not JSON', 'not json {'],
    ['JSON that is not an S3 event', JSON.stringify({ hello: 'world' })],
    [
      'a record without a bucket',
      JSON.stringify({ Records: [{ eventName: 'ObjectCreated:Put', eventTime: 'x', s3: {} }] }),
    ],
    ['a record whose eventTime is not a time', body(record('a.csv', { eventTime: 'yesterday' }))],
    ['a key with a broken percent escape', body(record('in/100%.csv'))],
    ['an SNS envelope whose Message is not JSON', JSON.stringify({ Type: 'Notification', Message: '{' })],
  ])('calls %s malformed', (_what, text) => {
    expect(decodeS3Message(text).kind).toBe('malformed');
  });
});

describe('decodeObjectKey', () => {
  it('is the inverse of S3’s form encoding', () => {
    expect(decodeObjectKey('a%2Fb+c%25d')).toBe('a/b c%d');
  });
});

describe('changesData', () => {
  it.each([
    ['ObjectCreated:Put', true],
    ['ObjectCreated:CompleteMultipartUpload', true],
    ['ObjectRemoved:Delete', true],
    ['ObjectRemoved:DeleteMarkerCreated', true],
    ['LifecycleExpiration:Delete', true],
    ['s3:ObjectCreated:Copy', true],
    ['ObjectTagging:Put', false],
    ['ObjectRestore:Completed', false],
    ['ObjectAcl:Put', false],
  ])('%s changes data: %s', (eventName, expected) => {
    expect(changesData(eventName)).toBe(expected);
  });
});
