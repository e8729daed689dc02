import { createHash } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import type { Config } from '../config.js';
import { notificationInstructions } from './instructions.js';
import { NotificationsUnavailableError } from './types.js';
import type { NotificationQueue, NotificationQueues, NotificationSetup } from './types.js';

/** SQS queue names: at most 80 characters of letters, digits, `-` and `_`. */
const MAX_QUEUE_NAME = 80;

/**
 * Attributes every organization queue gets, the same on every CreateQueue so that creating is
 * idempotent (SQS refuses a CreateQueue whose attributes differ from the existing queue's):
 * - ReceiveMessageWaitTimeSeconds 20: long polls by default, the cheapest way to wait for events;
 * - VisibilityTimeout 120 s: a batch is counted, refreshed and deleted well within it; if the
 *   operator dies mid-batch, the events come back after it (at least once);
 * - MessageRetentionPeriod 4 days (SQS's default, stated): events wait through an operator outage.
 */
export const QUEUE_ATTRIBUTES = {
  ReceiveMessageWaitTimeSeconds: '20',
  VisibilityTimeout: '120',
  MessageRetentionPeriod: '345600',
} as const;

/**
 * `<prefix><namespace>` when that is a valid queue name; otherwise invalid characters become `-`
 * and a name too long keeps its start and ends in a hash of the whole, so it stays unique.
 */
export function queueNameFor(prefix: string, namespace: string): string {
  const wanted = `${prefix}${namespace}`;
  const safe = wanted.replace(/[^A-Za-z0-9_-]/g, '-');
  if (safe === wanted && safe.length <= MAX_QUEUE_NAME) return safe;
  const hash = createHash('sha256').update(wanted).digest('hex').slice(0, 12);
  return `${safe.slice(0, MAX_QUEUE_NAME - hash.length - 1)}-${hash}`;
}

/**
 * The queue policy: S3 may send to this queue. AWS also requires it before it accepts a bucket
 * notification naming the queue. With `sourceAccounts`, only buckets owned by those accounts may
 * send (`aws:SourceAccount`, the confused-deputy guard AWS recommends); without, any bucket may, since
 * an organization's buckets can live in any account. That is safe enough: an event only counts when
 * its bucket and key match a dataset of the organization, and it can do no more than refresh it.
 */
export function queuePolicy(queueArn: string, sourceAccounts: readonly string[]): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Id: `${queueArn}/agentry-s3-notifications`,
    Statement: [
      {
        Sid: 'AllowS3BucketNotifications',
        Effect: 'Allow',
        Principal: { Service: 's3.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        ...(sourceAccounts.length === 0
          ? {}
          : { Condition: { StringEquals: { 'aws:SourceAccount': [...sourceAccounts] } } }),
      },
    ],
  });
}

export interface SqsNotificationQueuesOptions {
  region: string;
  /** SQS-compatible services and tests (moto); default: AWS's endpoint for the region. */
  endpoint?: string | undefined;
  /** Queue names are `<queuePrefix><namespace>`. */
  queuePrefix: string;
  /** Accounts whose buckets may send to the queues; empty or absent: any (see queuePolicy). */
  sourceAccounts?: readonly string[];
  /** Default: the AWS SDK's default chain (environment, profile, web identity, instance role). */
  credentials?: SQSClientConfig['credentials'];
}

/** A message received from an organization's queue. */
export interface QueueMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
}

/** The SQS error names of a queue that is gone (deleted by hand, or never created). */
const QUEUE_MISSING = new Set(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue']);

export const isQueueMissing = (err: unknown): boolean => err instanceof Error && QUEUE_MISSING.has(err.name);

/** An SDK error for a message: its name and message, with anything shaped like an access key id cut. */
function describeAwsError(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.replace(/\b(AKIA|ASIA)[A-Z0-9]{12,}\b/g, '[access key]').slice(0, 500);
}

/** SQS's batch calls take at most 10 entries: the messages in runs of 10. */
function* sqsBatches(messages: readonly QueueMessage[]): Generator<readonly QueueMessage[]> {
  for (let start = 0; start < messages.length; start += 10) yield messages.slice(start, start + 10);
}

/**
 * One SQS queue per organization for its S3 bucket events (docs/api.md#context-lake): the API server ensures
 * it when a dataset is saved with notifications, the operator ensures it too and long-polls it.
 */
export class SqsNotificationQueues implements NotificationQueues {
  readonly client: SQSClient;

  constructor(private readonly options: SqsNotificationQueuesOptions) {
    this.client = new SQSClient({
      region: options.region,
      // Longer than a 20 s long poll; a connection that hangs beyond it would stall an organization's loop.
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 40_000 },
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    });
  }

  queueName(namespace: string): string {
    return queueNameFor(this.options.queuePrefix, namespace);
  }

  async ensureQueue(namespace: string): Promise<NotificationQueue> {
    const name = this.queueName(namespace);
    try {
      const queueUrl = await this.createQueue(name);
      const { Attributes } = await this.client.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
      );
      const queueArn = Attributes?.QueueArn;
      if (queueArn === undefined) throw new Error('GetQueueAttributes answered no QueueArn');
      const policy = queuePolicy(queueArn, this.options.sourceAccounts ?? []);
      await this.client.send(
        new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { Policy: policy } }),
      );
      return { queueUrl, queueArn, region: this.options.region };
    } catch (err) {
      throw new NotificationsUnavailableError(
        `the notification queue ${name} in ${this.options.region} cannot be set up (${describeAwsError(err)})`,
        { cause: err },
      );
    }
  }

  setupFor(queue: NotificationQueue, datasetFrom: string): NotificationSetup {
    return {
      queueArn: queue.queueArn,
      region: queue.region,
      instructions: notificationInstructions(queue, datasetFrom),
    };
  }

  /** Waits up to 20 s for up to 10 messages; `signal` ends the wait at once (shutdown). */
  async receive(queueUrl: string, signal: AbortSignal): Promise<QueueMessage[]> {
    const { Messages = [] } = await this.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20 }),
      { abortSignal: signal },
    );
    const messages: QueueMessage[] = [];
    for (const message of Messages) {
      if (message.MessageId === undefined || message.ReceiptHandle === undefined) continue;
      messages.push({
        messageId: message.MessageId,
        receiptHandle: message.ReceiptHandle,
        body: message.Body ?? '',
      });
    }
    return messages;
  }

  /** Deletes handled messages; returns the ids SQS did not delete. */
  async acknowledge(queueUrl: string, messages: readonly QueueMessage[]): Promise<string[]> {
    const failed: string[] = [];
    for (const chunk of sqsBatches(messages)) {
      const { Failed = [] } = await this.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.receiptHandle,
          })),
        }),
      );
      for (const entry of Failed) {
        const message = chunk[Number(entry.Id)];
        if (message !== undefined) failed.push(message.messageId);
      }
    }
    return failed;
  }

  /**
   * Makes messages visible again after `delaySeconds` instead of the queue's visibility timeout: a
   * batch that could not be handled is retried sooner. Best effort: the timeout applies otherwise.
   */
  async release(queueUrl: string, messages: readonly QueueMessage[], delaySeconds: number): Promise<void> {
    for (const chunk of sqsBatches(messages)) {
      await this.client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.receiptHandle,
            VisibilityTimeout: Math.max(0, Math.round(delaySeconds)),
          })),
        }),
      );
    }
  }

  close(): void {
    this.client.destroy();
  }

  /** CreateQueue; a queue made with other attributes (an older release) is reused and updated. */
  private async createQueue(name: string): Promise<string> {
    try {
      const { QueueUrl } = await this.client.send(
        new CreateQueueCommand({ QueueName: name, Attributes: { ...QUEUE_ATTRIBUTES } }),
      );
      if (QueueUrl === undefined) throw new Error('CreateQueue answered no QueueUrl');
      return QueueUrl;
    } catch (err) {
      if (!(err instanceof Error) || (err.name !== 'QueueNameExists' && err.name !== 'QueueAlreadyExists'))
        throw err;
    }
    const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
    if (QueueUrl === undefined) throw new Error('GetQueueUrl answered no QueueUrl');
    await this.client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { ...QUEUE_ATTRIBUTES } }));
    return QueueUrl;
  }
}

/** The queues the configuration describes, or undefined when notifications are off. */
export function notificationQueuesFromConfig(
  config: Pick<
    Config,
    | 'AGENTRY_SQS_ENABLED'
    | 'AGENTRY_SQS_REGION'
    | 'AGENTRY_SQS_ENDPOINT'
    | 'AGENTRY_SQS_QUEUE_PREFIX'
    | 'AGENTRY_SQS_SOURCE_ACCOUNTS'
  >,
): SqsNotificationQueues | undefined {
  if (!config.AGENTRY_SQS_ENABLED) return undefined;
  return new SqsNotificationQueues({
    region: config.AGENTRY_SQS_REGION,
    endpoint: config.AGENTRY_SQS_ENDPOINT,
    queuePrefix: config.AGENTRY_SQS_QUEUE_PREFIX,
    sourceAccounts: config.AGENTRY_SQS_SOURCE_ACCOUNTS,
  });
}
