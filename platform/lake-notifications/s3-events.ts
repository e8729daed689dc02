import { z } from 'zod';
import type { Dataset } from '../../crds/context-lake/types.js';
import { parseDatasetSource } from '../lake-config/dataset-source.js';
import type { Connector } from '../lake-config/dataset-source.js';

/**
 * S3 bucket events as they arrive in an organization's SQS queue (AWS's event record format), and
 * which datasets they concern. Pure functions: the operator's poller decodes, matches and counts.
 */

/** One object change in a bucket, decoded. */
export interface S3ObjectEvent {
  /** `ObjectCreated:Put`, `ObjectRemoved:Delete`... (without the `s3:` of the configuration). */
  eventName: string;
  eventTime: Date;
  bucket: string;
  /** The object key, URL-decoded. */
  key: string;
  /** Created objects: their ETag and size as S3 reports them. */
  eTag?: string | undefined;
  size?: number | undefined;
  /** S3's ordering token of the key's events (hex; a later event of a key has a greater one). */
  sequencer?: string | undefined;
}

/**
 * What one message body holds: object events; S3's `s3:TestEvent`, sent when a notification is
 * configured; or something else, which is dropped (it would come back forever otherwise).
 */
export type DecodedMessage =
  { kind: 'events'; events: S3ObjectEvent[] } | { kind: 'test' } | { kind: 'malformed'; reason: string };

/**
 * `eventTime` as AWS writes it (`2026-11-22T21:20:00.123Z`), or without a zone designator, as moto
 * writes it (then it is UTC). Anything unparsable makes the record malformed.
 */
const eventTimeSchema = z.string().transform((text, context) => {
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`;
  const time = new Date(zoned);
  if (Number.isNaN(time.getTime())) {
    context.addIssue({ code: 'custom', message: `eventTime ${JSON.stringify(text)} is not a timestamp` });
    return z.NEVER;
  }
  return time;
});

/**
 * What an object record may tell beyond its key; an odd value is left out rather than making the
 * record malformed (the event still refreshes its dataset, by comparing the source).
 */
const optionalDetail = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

const RecordSchema = z.object({
  eventName: z.string().min(1),
  eventTime: eventTimeSchema,
  s3: z.object({
    bucket: z.object({ name: z.string().min(1) }),
    object: z.object({
      key: z.string(),
      eTag: optionalDetail(z.string().min(1)),
      size: optionalDetail(z.number().int().min(0)),
      sequencer: optionalDetail(z.string().regex(/^[0-9A-Fa-f]+$/)),
    }),
  }),
});

const RecordsSchema = z.object({ Records: z.array(RecordSchema) });
const TestEventSchema = z.object({ Event: z.literal('s3:TestEvent') });
/** S3 → SNS → SQS: the S3 message travels as a string in the SNS notification's `Message`. */
const SnsEnvelopeSchema = z.object({ Type: z.literal('Notification'), Message: z.string() });

/** Keys in event records are URL-encoded with `+` for spaces (AWS and moto; moto also encodes `/`). */
export function decodeObjectKey(encoded: string): string {
  return decodeURIComponent(encoded.replace(/\+/g, ' '));
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A record as an event; undefined when its key is not URL-encoded. */
function eventOf(record: z.infer<typeof RecordSchema>): S3ObjectEvent | undefined {
  let key: string;
  try {
    key = decodeObjectKey(record.s3.object.key);
  } catch {
    return undefined;
  }
  const { eTag, size, sequencer } = record.s3.object;
  return {
    eventName: record.eventName,
    eventTime: record.eventTime,
    bucket: record.s3.bucket.name,
    key,
    ...(eTag === undefined ? {} : { eTag }),
    ...(size === undefined ? {} : { size }),
    ...(sequencer === undefined ? {} : { sequencer }),
  };
}

function decodeValue(value: unknown, depth: number): DecodedMessage {
  if (TestEventSchema.safeParse(value).success) return { kind: 'test' };
  const envelope = SnsEnvelopeSchema.safeParse(value);
  if (envelope.success && depth === 0) {
    const inner = parseJson(envelope.data.Message);
    return inner.ok ? decodeValue(inner.value, 1) : { kind: 'malformed', reason: 'SNS Message is not JSON' };
  }
  const parsed = RecordsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : `${issue.path.join('.')}: `;
    return { kind: 'malformed', reason: `not an S3 event: ${where}${issue?.message ?? 'invalid'}` };
  }
  const events: S3ObjectEvent[] = [];
  for (const record of parsed.data.Records) {
    const event = eventOf(record);
    if (event === undefined) return { kind: 'malformed', reason: 'an object key is not URL-encoded' };
    events.push(event);
  }
  return { kind: 'events', events };
}

/** Decodes one SQS message body (S3 event JSON, possibly in an SNS envelope). Never throws. */
export function decodeS3Message(body: string): DecodedMessage {
  const json = parseJson(body);
  return json.ok ? decodeValue(json.value, 0) : { kind: 'malformed', reason: 'the body is not JSON' };
}

/**
 * Whether an event changes an object's data: created and removed objects (the notification the
 * instructions ask for) and lifecycle expirations. Tagging, ACL, restore and replication events of a
 * broader notification leave the data as it was.
 */
export function changesData(eventName: string): boolean {
  return /^(ObjectCreated|ObjectRemoved|LifecycleExpiration):/.test(eventName.replace(/^s3:/, ''));
}

/** An S3 dataset with notifications: the object or prefix whose changes refresh it. */
export interface NotificationTarget {
  dataset: string;
  bucket: string;
  /** The object's key, or a prefix (ending in `/`, or empty: the whole bucket). */
  key: string;
  isPrefix: boolean;
}

const S3_ONLY: ReadonlySet<Connector> = new Set(['s3']);

/** The datasets of a lake whose bucket events count: S3 datasets with `notifications: true`. */
export function notificationTargets(datasets: readonly Dataset[]): NotificationTarget[] {
  const targets: NotificationTarget[] = [];
  for (const dataset of datasets) {
    if (dataset.notifications !== true) continue;
    // The API validated it on save; one that no longer parses (a connector turned off) is skipped.
    const parsed = parseDatasetSource(dataset, { connectors: S3_ONLY });
    if (!parsed.ok || parsed.source.connector !== 's3') continue;
    const { bucket, key, isPrefix } = parsed.source;
    targets.push({ dataset: dataset.name, bucket, key, isPrefix });
  }
  return targets;
}

/**
 * The datasets an event concerns: same bucket, and the key equal to a single object's key or under
 * a prefix. A prefix ends in `/`, so `in/` matches `in/a.csv` but not `inbox/a.csv`.
 */
export function matchingDatasets(event: S3ObjectEvent, targets: readonly NotificationTarget[]): string[] {
  return targets
    .filter(
      (target) =>
        target.bucket === event.bucket &&
        (target.isPrefix ? event.key.startsWith(target.key) : event.key === target.key),
    )
    .map((target) => target.dataset);
}
