import { datasetFactsOf } from '../../crds/context-lake/types.js';
import type { DatasetFacts, DatasetStatus } from '../../crds/context-lake/types.js';
import type { LakeDatasetState } from '../../platform/lake-protocol.js';
import { statusUnchanged } from '../../platform/store/status-writer.js';

/**
 * What a dataset's table holds (DatasetFacts), as the lake reports it, copied into
 * ContextLake.status.datasets[name]: rows, bytes, when loaded, how current, the source versions
 * and the last refresh.
 */

/**
 * How long a dataAsOf that alone moved stays as stored. Every source check and every event moves
 * it, on a lake with an interval check every few seconds; a status write per move would wake every
 * watcher of the resource for a value every SQL answer carries exactly anyway.
 */
export const DATA_AS_OF_STEP_MS = 60_000;

/** A lake's timestamp in the resource's format (ISO with milliseconds and Z); undefined if unreadable. */
export function isoOf(time: string | undefined): string | undefined {
  const ms = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * The facts of a dataset state, timestamps normalized (one the lake wrote unreadably is left out).
 * Fields the lake did not report are undefined: a status write leaves them out.
 */
export function factsOf(state: LakeDatasetState): DatasetFacts {
  const { sources, lastRefresh } = state;
  const at = isoOf(lastRefresh?.at);
  return {
    rowCount: state.rowCount,
    bytes: state.bytes,
    loadedAt: isoOf(state.loadedAt),
    dataAsOf: isoOf(state.dataAsOf),
    sources:
      sources === undefined
        ? undefined
        : {
            objects: sources.objects,
            digest: sources.digest.slice(0, 128),
            newestModified: isoOf(sources.newestModified),
          },
    lastRefresh: lastRefresh === undefined || at === undefined ? undefined : { ...lastRefresh, at },
  };
}

/**
 * `next` with the stored dataAsOf kept when nothing else changed and the new one is less than
 * DATA_AS_OF_STEP_MS later: the status is written when the data changed, or once a minute.
 */
export function withSteadyDataAsOf(next: DatasetFacts, stored: DatasetFacts): DatasetFacts {
  const { dataAsOf: nextAsOf, ...nextRest } = next;
  const { dataAsOf: storedAsOf, ...storedRest } = stored;
  if (nextAsOf === undefined || storedAsOf === undefined || !statusUnchanged(nextRest, storedRest))
    return next;
  const moved = Date.parse(nextAsOf) - Date.parse(storedAsOf);
  return moved >= 0 && moved < DATA_AS_OF_STEP_MS ? { ...next, dataAsOf: storedAsOf } : next;
}

/**
 * The facts a dataset's status entry gets: the lake's, or while it does not report the dataset
 * (paused, starting) the stored ones, since its disk still holds that data. When the dataset's
 * state changed the status is written anyway, and dataAsOf goes with it exactly.
 */
export function factsToWrite(
  state: LakeDatasetState | undefined,
  stored: DatasetStatus | undefined,
): DatasetFacts {
  const kept = datasetFactsOf(stored);
  if (state === undefined) return kept;
  const fresh = factsOf(state);
  return stored?.status === state.status ? withSteadyDataAsOf(fresh, kept) : fresh;
}
