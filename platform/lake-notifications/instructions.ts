import type { NotificationQueue } from './types.js';

/** The events whose notifications refresh a dataset (docs/api.md#events: object created and object removed). */
export const NOTIFICATION_EVENTS = ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'] as const;

/** Bucket and key (or prefix) of an `s3://bucket/key` URI. */
export function bucketAndPrefixOf(datasetFrom: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(datasetFrom);
  if (match?.[1] === undefined) throw new Error(`notifications need an s3:// dataset, not ${datasetFrom}`);
  return { bucket: match[1], prefix: match[2] ?? '' };
}

/**
 * The NotificationConfiguration for `aws s3api put-bucket-notification-configuration`: one queue
 * configuration for created and removed objects under the prefix (a single object's key is its own
 * prefix; S3 filters have no exact match).
 */
export function bucketNotificationConfiguration(queueArn: string, prefix: string): object {
  return {
    QueueConfigurations: [
      {
        Id: 'agentry-context-lake',
        QueueArn: queueArn,
        Events: [...NOTIFICATION_EVENTS],
        ...(prefix === '' ? {} : { Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: prefix }] } } }),
      },
    ],
  };
}

/** The steps of docs/api.md#events for one dataset, naming its bucket, its key prefix and the queue. */
export function notificationInstructions(queue: NotificationQueue, datasetFrom: string): string[] {
  const { bucket, prefix } = bucketAndPrefixOf(datasetFrom);
  const configuration = JSON.stringify(bucketNotificationConfiguration(queue.queueArn, prefix));
  const filter =
    prefix === ''
      ? 'leave the prefix filter empty (the whole bucket)'
      : `set the prefix filter to "${prefix}"`;
  return [
    `Open the event notification settings of bucket "${bucket}" (S3 console: the bucket → Properties → Event notifications → Create event notification). The bucket must be in region ${queue.region}, the queue's region.`,
    `Name the notification (for example agentry-context-lake) and ${filter}.`,
    'Select the event types "All object create events" (s3:ObjectCreated:*) and "All object removal events" (s3:ObjectRemoved:*).',
    `Choose the destination "SQS queue" and enter the queue ARN ${queue.queueArn}, then save. The queue already allows S3 to send to it.`,
    `Or with the AWS CLI (this replaces the bucket's whole notification configuration: merge it with an existing one first): aws s3api put-bucket-notification-configuration --bucket ${bucket} --notification-configuration '${configuration}'`,
    'From then on, changes under the prefix refresh the dataset; GET /v1/context-lake/status shows s3EventCount, s3LastEventAt and s3LastRefreshAt.',
  ];
}
