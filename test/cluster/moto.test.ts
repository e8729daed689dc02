import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { testCluster } from './support.js';

const aws = () => {
  const endpoint = testCluster().motoUrl;
  const common = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  };
  return { s3: new S3Client({ ...common, forcePathStyle: true }), sqs: new SQSClient(common) };
};

const S3EventSchema = z.object({
  Records: z.array(
    z.object({
      eventName: z.string(),
      s3: z.object({ bucket: z.object({ name: z.string() }), object: z.object({ key: z.string() }) }),
    }),
  ),
});

// moto is shared by every cluster test file: never reset it, use names of our own.
const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

describe('moto (S3 and SQS on loopback)', () => {
  it('delivers an S3 object-created event to an SQS queue in the AWS record format', async () => {
    const { s3, sqs } = aws();
    const bucket = unique('lake-data');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: unique('lake-events') }));
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: [
            { QueueArn: attributes.Attributes?.QueueArn, Events: ['s3:ObjectCreated:*'] },
          ],
        },
      }),
    );
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/orders.csv', Body: 'id\n1\n' }));

    const records = [];
    for (let attempt = 0; attempt < 10 && records.length === 0; attempt++) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const message of Messages) {
        const parsed = S3EventSchema.safeParse(JSON.parse(message.Body ?? '{}'));
        if (parsed.success) records.push(...parsed.data.Records); // skips moto's s3:TestEvent
      }
    }
    expect(records).toHaveLength(1);
    expect(records[0]?.eventName).toMatch(/^ObjectCreated:/);
    expect(decodeURIComponent((records[0]?.s3.object.key ?? '').replace(/\+/g, ' '))).toBe('in/orders.csv');
  });

  it('refuses a put into a bucket that does not exist', async () => {
    const { s3 } = aws();
    await expect(
      s3.send(new PutObjectCommand({ Bucket: unique('missing'), Key: 'x', Body: 'x' })),
    ).rejects.toThrow(/bucket/i);
  });
});
