/**
 * S3 bucket notifications for context lakes (docs/architecture.md#the-context-lake): one SQS queue per organization. The
 * API server ensures the queue when a dataset is saved with `notifications: true` and answers
 * its ARN; the operator long-polls it. Implemented in platform/lake-notifications/queues.ts.
 */

/** An organization's queue. */
export interface NotificationQueue {
  queueUrl: string;
  queueArn: string;
  region: string;
}

/** What POST /datasets and PATCH /config answer for a dataset with notifications (docs/api.md#context-lake). */
export interface NotificationSetup {
  queueArn: string;
  region: string;
  /** Steps for the bucket owner, naming the bucket, the key prefix and the queue. */
  instructions: string[];
}

export interface NotificationQueues {
  /**
   * Creates the organization's queue when missing, and (re)sets its policy so that S3 buckets may
   * send to it; idempotent, safe to call on every save. Throws NotificationsUnavailableError when
   * SQS cannot be reached.
   */
  ensureQueue(namespace: string): Promise<NotificationQueue>;
  /** The set-up answer for one S3 dataset (`s3://bucket/prefix`) on a queue. */
  setupFor(queue: NotificationQueue, datasetFrom: string): NotificationSetup;
}

export class NotificationsUnavailableError extends Error {
  override name = 'NotificationsUnavailableError';
}
