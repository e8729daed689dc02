import { describe, expect, it } from '@jest/globals';
import { bucketNotificationConfiguration } from '../../platform/lake-notifications/instructions.js';
import {
  queueNameFor,
  queuePolicy,
  SqsNotificationQueues,
} from '../../platform/lake-notifications/queues.js';
import { NotificationsUnavailableError } from '../../platform/lake-notifications/types.js';

const QUEUE = {
  queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/agentry-lake-agentry-org-acme',
  queueArn: 'arn:aws:sqs:eu-west-1:123456789012:agentry-lake-agentry-org-acme',
  region: 'eu-west-1',
};

describe('queueNameFor', () => {
  it('is the prefix and the namespace when that is a valid SQS name', () => {
    expect(queueNameFor('agentry-lake-', 'agentry-org-acme')).toBe('agentry-lake-agentry-org-acme');
  });

  it('shortens a name over 80 characters with a hash, keeping names of different namespaces apart', () => {
    const prefix = 'p'.repeat(40);
    const a = queueNameFor(prefix, `org-${'a'.repeat(58)}`);
    const b = queueNameFor(prefix, `org-${'a'.repeat(57)}b`);
    expect(a).toHaveLength(80);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(queueNameFor(prefix, `org-${'a'.repeat(58)}`)).toBe(a);
  });
});

describe('queuePolicy', () => {
  it('lets S3 send to the queue, from any account when none is configured', () => {
    const policy: unknown = JSON.parse(queuePolicy(QUEUE.queueArn, []));
    expect(policy).toMatchObject({
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 's3.amazonaws.com' },
          Action: 'sqs:SendMessage',
          Resource: QUEUE.queueArn,
        },
      ],
    });
    expect(JSON.stringify(policy)).not.toContain('Condition');
  });

  it('restricts senders to the configured source accounts', () => {
    const policy: unknown = JSON.parse(queuePolicy(QUEUE.queueArn, ['111122223333']));
    expect(policy).toMatchObject({
      Statement: [{ Condition: { StringEquals: { 'aws:SourceAccount': ['111122223333'] } } }],
    });
  });
});

describe('setupFor', () => {
  const queues = new SqsNotificationQueues({ region: 'eu-west-1', queuePrefix: 'agentry-lake-' });

  it('answers the queue and instructions naming the bucket, the prefix, both event kinds and the ARN', () => {
    const setup = queues.setupFor(QUEUE, 's3://lake-data/in/orders/');
    expect(setup.queueArn).toBe(QUEUE.queueArn);
    expect(setup.region).toBe('eu-west-1');
    const text = setup.instructions.join('\n');
    expect(text).toContain('"lake-data"');
    expect(text).toContain('"in/orders/"');
    expect(text).toContain('s3:ObjectCreated:*');
    expect(text).toContain('s3:ObjectRemoved:*');
    expect(text).toContain(QUEUE.queueArn);
    expect(text).toContain('aws s3api put-bucket-notification-configuration --bucket lake-data');
  });

  it('gives a CLI configuration that parses to a queue configuration with a prefix filter', () => {
    const cli = queues
      .setupFor(QUEUE, 's3://lake-data/in/')
      .instructions.find((step) => step.includes('s3api'));
    const json = /--notification-configuration '(.*)'$/.exec(cli ?? '')?.[1];
    expect(JSON.parse(json ?? 'null')).toEqual(bucketNotificationConfiguration(QUEUE.queueArn, 'in/'));
    expect(bucketNotificationConfiguration(QUEUE.queueArn, 'in/')).toEqual({
      QueueConfigurations: [
        {
          Id: 'agentry-context-lake',
          QueueArn: QUEUE.queueArn,
          Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'],
          Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'in/' }] } },
        },
      ],
    });
  });

  it('uses a single object’s key as its prefix filter and no filter for a whole bucket', () => {
    expect(queues.setupFor(QUEUE, 's3://lake-data/customers.csv').instructions.join('\n')).toContain(
      '"customers.csv"',
    );
    expect(bucketNotificationConfiguration(QUEUE.queueArn, '')).toEqual({
      QueueConfigurations: [
        {
          Id: 'agentry-context-lake',
          QueueArn: QUEUE.queueArn,
          Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'],
        },
      ],
    });
  });
});

describe('ensureQueue', () => {
  it('fails with NotificationsUnavailableError naming the queue, never the credentials, when SQS cannot be reached', async () => {
    const secret = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const queues = new SqsNotificationQueues({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      queuePrefix: 'agentry-lake-',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: secret },
    });
    try {
      const failure = await queues.ensureQueue('agentry-org-acme').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(NotificationsUnavailableError);
      const message = (failure as Error).message;
      expect(message).toContain('agentry-lake-agentry-org-acme');
      expect(message).not.toContain(secret);
      expect(message).not.toContain('AKIAIOSFODNN7EXAMPLE');
    } finally {
      queues.close();
    }
  });
});
