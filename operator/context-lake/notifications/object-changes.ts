import { ObjectChangeSchema, RefreshRequestSchema } from '../../../platform/lake-protocol.js';
import type { ObjectChange, RefreshRequest } from '../../../platform/lake-protocol.js';
import type { NotificationTarget, S3ObjectEvent } from '../../../platform/lake-notifications/s3-events.js';
import { concernedDatasets } from './lake-counters.js';

/**
 * A batch of bucket events as the refresh the lake is asked for (docs/adr/0010-durable-incremental-lake.md):
 * each event that changes data becomes an object change per dataset it concerns, so the lake
 * appends or removes that object's rows instead of reloading the dataset.
 */

/** The change an event makes to an object, or undefined when its name is not a data change. */
function changeKind(eventName: string): ObjectChange['event'] | undefined {
  const name = eventName.replace(/^s3:/, '');
  if (name.startsWith('ObjectCreated:')) return 'created';
  if (name.startsWith('ObjectRemoved:') || name.startsWith('LifecycleExpiration:')) return 'removed';
  return undefined;
}

function changeOf(event: S3ObjectEvent, dataset: string): ObjectChange | undefined {
  const kind = changeKind(event.eventName);
  if (kind === undefined) return undefined;
  const parsed = ObjectChangeSchema.safeParse({
    dataset,
    event: kind,
    bucket: event.bucket,
    key: event.key,
    ...(kind === 'created' && event.eTag !== undefined ? { etag: event.eTag } : {}),
    ...(kind === 'created' && event.size !== undefined ? { size: event.size } : {}),
    ...(event.sequencer === undefined ? {} : { sequencer: event.sequencer }),
    eventTime: event.eventTime.toISOString(),
  });
  return parsed.success ? parsed.data : undefined;
}

/**
 * The refresh for a batch: every dataset the events concern, with the changes they make. A
 * dataset one of whose events the protocol cannot carry (a key too long, say) gets no changes at
 * all: the lake then compares its whole source, rather than apply some changes and miss one. The
 * request always fits the protocol (the lake would refuse it, and the events come back forever).
 */
export function refreshRequestOf(
  events: readonly S3ObjectEvent[],
  targets: readonly NotificationTarget[],
): RefreshRequest {
  const changes = new Map<string, ObjectChange[]>();
  const unexpressed = new Set<string>();
  for (const event of events)
    for (const dataset of new Set(concernedDatasets(event, targets))) {
      const change = changeOf(event, dataset);
      if (change === undefined) unexpressed.add(dataset);
      else changes.set(dataset, [...(changes.get(dataset) ?? []), change]);
    }
  const datasets = [...new Set([...changes.keys(), ...unexpressed])].sort();
  const carried = [...changes].filter(([dataset]) => !unexpressed.has(dataset)).flatMap(([, list]) => list);
  const request = { datasets, ...(carried.length === 0 ? {} : { changes: carried }) };
  // Past the protocol's bounds (a flood of events in one batch): a comparison of the sources does it all.
  return RefreshRequestSchema.safeParse(request).success ? request : { datasets };
}
