import { ContextLakeConditions, ContextLakeReasons } from '../../../crds/context-lake/conditions.js';
import type { ContextLake, ContextLakeStatus, DatasetStatus } from '../../../crds/context-lake/types.js';
import { changesData, matchingDatasets } from '../../../platform/lake-notifications/s3-events.js';
import type { NotificationTarget, S3ObjectEvent } from '../../../platform/lake-notifications/s3-events.js';
import type { NotificationQueue } from '../../../platform/lake-notifications/types.js';
import { findCondition, setCondition } from '../../../crds/conditions.js';

/**
 * Pure functions of S3 notification handling: which lakes need a queue, how a batch of events is
 * counted per dataset, and the status those counts and the queue make. The status functions change
 * only what this controller owns (the s3* counters, `notifications`, NotificationsReady) and keep
 * every other field, so the ContextLake reconciler's writes and ours merge.
 */

/** A lake needs its organization's queue while one of its datasets asks for notifications. */
export function wantsNotifications(lake: ContextLake): boolean {
  return (
    lake.metadata.deletionTimestamp === undefined &&
    lake.spec.config.datasets.some((dataset) => dataset.notifications === true)
  );
}

/**
 * Refresh requests go to a lake that is meant to run and answers (Ready True, with an endpoint). A
 * paused or starting lake loads every dataset when it becomes ready, so its events are only counted.
 */
export function refreshEndpointOf(lake: ContextLake): string | undefined {
  const ready = findCondition(lake.status?.conditions, ContextLakeConditions.Ready);
  if (lake.spec.operatingMode !== 'Running' || ready?.status !== 'True') return undefined;
  return lake.status?.endpoint;
}

export interface DatasetTally {
  count: number;
  lastEventAt: Date;
}

export interface BatchTally {
  /** Per dataset name: how many events concern it, and the latest one's time. */
  datasets: Map<string, DatasetTally>;
  matched: number;
  unmatched: number;
}

/** The datasets an event concerns: it changes data, in a dataset's bucket under its key or prefix. */
export function concernedDatasets(event: S3ObjectEvent, targets: readonly NotificationTarget[]): string[] {
  return changesData(event.eventName) ? matchingDatasets(event, targets) : [];
}

/** Counts events per dataset; one event under two datasets' prefixes counts for both. */
export function tallyEvents(
  events: readonly S3ObjectEvent[],
  targets: readonly NotificationTarget[],
): BatchTally {
  const tally: BatchTally = { datasets: new Map(), matched: 0, unmatched: 0 };
  for (const event of events) {
    const names = concernedDatasets(event, targets);
    if (names.length === 0) {
      tally.unmatched++;
      continue;
    }
    tally.matched++;
    for (const name of new Set(names)) {
      const current = tally.datasets.get(name);
      tally.datasets.set(name, {
        count: (current?.count ?? 0) + 1,
        lastEventAt:
          current === undefined || event.eventTime > current.lastEventAt
            ? event.eventTime
            : current.lastEventAt,
      });
    }
  }
  return tally;
}

const later = (iso: string | undefined, date: Date): string =>
  iso !== undefined && new Date(iso).getTime() >= date.getTime() ? iso : date.toISOString();

/** A dataset entry the ContextLake reconciler has not written yet: it fills in the rest. */
const PENDING_ENTRY: DatasetStatus = { ok: false, status: 'pending', connectorId: 's3', notifications: true };

/**
 * The status after counting a batch: s3EventCount grows by the dataset's events, s3LastEventAt
 * becomes the latest event time seen (never earlier), s3LastRefreshAt the time a running lake
 * accepted the refresh (when one was asked).
 */
export function statusWithEventCounts(
  status: ContextLakeStatus | undefined,
  datasets: ReadonlyMap<string, DatasetTally>,
  refreshedAt: Date | undefined,
): ContextLakeStatus {
  const entries: Record<string, DatasetStatus> = { ...status?.datasets };
  for (const [name, tally] of datasets) {
    const entry = entries[name] ?? PENDING_ENTRY;
    entries[name] = {
      ...entry,
      s3EventCount: (entry.s3EventCount ?? 0) + tally.count,
      s3LastEventAt: later(entry.s3LastEventAt, tally.lastEventAt),
      ...(refreshedAt === undefined ? {} : { s3LastRefreshAt: refreshedAt.toISOString() }),
    };
  }
  return { ...status, datasets: entries };
}

/** The status after ensuring the queue: its coordinates and NotificationsReady True, or False with why. */
export function statusWithQueue(
  lake: ContextLake,
  outcome: { queue: NotificationQueue } | { error: string },
  now: Date,
): ContextLakeStatus {
  const status = lake.status ?? {};
  const condition =
    'queue' in outcome
      ? {
          type: ContextLakeConditions.NotificationsReady,
          status: 'True' as const,
          reason: ContextLakeReasons.QueueReady,
          message: `bucket events arrive through ${outcome.queue.queueArn}`,
        }
      : {
          type: ContextLakeConditions.NotificationsReady,
          status: 'False' as const,
          reason: ContextLakeReasons.QueueFailed,
          message: outcome.error,
        };
  const conditions = setCondition(status.conditions, condition, lake.metadata.generation, now);
  if (!('queue' in outcome)) return { ...status, conditions };
  const { queueUrl, queueArn, region } = outcome.queue;
  return { ...status, notifications: { queueUrl, queueArn, region }, conditions };
}
