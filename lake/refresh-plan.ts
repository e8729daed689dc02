import type { ObjectChange } from '../platform/lake-protocol.js';
import type { StagedBatch } from './load.js';
import type { StoredDataset, StoredObject } from './catalog.js';
import { bareEtag } from './sources/index.js';
import type { ObjectVersion, SourceObject } from './sources/index.js';

/**
 * What an incremental refresh changes in a dataset's table (docs/adr/0010-durable-incremental-lake.md):
 * the objects to fetch and to delete, from the source's listing or from changes to named keys, and
 * the catalog's objects once the fetched ones are staged. Only `planChanges` asks the source (HEAD).
 */

/** A key to bring up to date alone: `created` looks at the source (the object may be gone again). */
export interface KeyChange {
  key: string;
  event: 'created' | 'removed';
  etag?: string | undefined;
  sequencer?: string | undefined;
}

export interface RefreshPlan {
  fetch: SourceObject[];
  removed: string[];
  /** Keys whose data stays but whose last event moved on. */
  sequencers: Map<string, string>;
}

/**
 * S3 sequencers are hex strings of varying length: left-padded with zeros to the same length, the
 * larger is the later change of a key (AWS's rule for comparing them).
 */
export function compareSequencers(a: string, b: string): number {
  const width = Math.max(a.length, b.length);
  const left = a.toLowerCase().padStart(width, '0');
  const right = b.toLowerCase().padStart(width, '0');
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Same data: equal ETags, or without them equal LastModified and size; unknown is different. */
export function sameVersion(stored: ObjectVersion, current: ObjectVersion): boolean {
  if (stored.etag !== undefined && current.etag !== undefined) return stored.etag === current.etag;
  if (stored.lastModified === undefined || stored.size === undefined) return false;
  return stored.lastModified === current.lastModified && stored.size === current.size;
}

/** The listing against the catalog: new and changed objects to fetch, missing ones to delete. */
export function diffListing(stored: StoredDataset, listed: readonly SourceObject[]): RefreshPlan {
  const keys = new Set(listed.map((object) => object.key));
  return {
    fetch: listed.filter((object) => {
      const before = stored.objects.get(object.key);
      return before === undefined || !sameVersion(before, object);
    }),
    removed: [...stored.objects.keys()].filter((key) => !keys.has(key)),
    sequencers: new Map(),
  };
}

/** Looks one key up at the source: undefined when it is gone. */
export type HeadObject = (key: string) => Promise<SourceObject | undefined>;

/** Each key as the source holds it now; a redelivered or older event changes nothing. */
export async function planChanges(
  stored: StoredDataset,
  changes: readonly KeyChange[],
  head: HeadObject,
): Promise<RefreshPlan> {
  const plan: RefreshPlan = { fetch: [], removed: [], sequencers: new Map() };
  for (const change of latestPerKey(changes))
    await planChange(stored.objects.get(change.key), change, head, plan);
  return plan;
}

async function planChange(
  before: StoredObject | undefined,
  change: KeyChange,
  head: HeadObject,
  plan: RefreshPlan,
): Promise<void> {
  const { key, sequencer } = change;
  if (isStale(change, before)) return;
  if (change.event === 'removed') {
    if (before !== undefined) plan.removed.push(key);
    return;
  }
  // Data unchanged: only the newer sequencer is recorded.
  const keep = (): void => {
    if (before !== undefined && sequencer !== undefined) plan.sequencers.set(key, sequencer);
  };
  if (change.etag !== undefined && before?.etag === change.etag) {
    keep();
    return;
  }
  const current = await head(key);
  if (current === undefined) {
    if (before !== undefined) plan.removed.push(key);
  } else if (before !== undefined && sameVersion(before, current)) keep();
  else {
    plan.fetch.push(current);
    if (sequencer !== undefined) plan.sequencers.set(key, sequencer);
  }
}

/** A change older than (or the same as) the last one applied to its key. */
function isStale(change: KeyChange, before: StoredObject | undefined): boolean {
  if (change.sequencer === undefined || before?.sequencer === undefined) return false;
  return compareSequencers(change.sequencer, before.sequencer) <= 0;
}

/** The latest change of each key (by sequencer when both have one, else the later in the list). */
function latestPerKey(changes: readonly KeyChange[]): KeyChange[] {
  const latest = new Map<string, KeyChange>();
  for (const change of changes) {
    const seen = latest.get(change.key);
    if (
      seen?.sequencer !== undefined &&
      change.sequencer !== undefined &&
      compareSequencers(change.sequencer, seen.sequencer) < 0
    )
      continue;
    latest.set(change.key, change);
  }
  return [...latest.values()];
}

/** The catalog's objects after a plan: fetched ones with new ids, removed and replaced ones gone. */
export function mergeObjects(
  stored: StoredDataset,
  plan: RefreshPlan,
  batch: StagedBatch | undefined,
): { objects: Map<string, StoredObject>; upserted: StoredObject[]; replacedIds: number[] } {
  const objects = new Map(stored.objects);
  const upserted: StoredObject[] = [];
  const fetched = new Set(plan.fetch.map((object) => object.key));
  for (const [key, sequencer] of plan.sequencers) {
    const before = objects.get(key);
    if (before === undefined || fetched.has(key)) continue;
    const updated = { ...before, sequencer };
    objects.set(key, updated);
    upserted.push(updated);
  }
  const replacedIds: number[] = [];
  for (const key of [...plan.removed, ...fetched]) {
    const before = objects.get(key);
    if (before !== undefined) replacedIds.push(before.id);
    objects.delete(key);
  }
  for (const object of batch?.objects ?? []) {
    const added = { ...object, sequencer: plan.sequencers.get(object.key) };
    objects.set(object.key, added);
    upserted.push(added);
  }
  return { objects, upserted, replacedIds };
}

/**
 * The object changes that are the dataset's: those naming it and its bucket (a change of another
 * bucket's key of the same name is not this dataset's), with bare ETags.
 */
export function keyChangesOf(
  name: string,
  bucket: string | undefined,
  changes: readonly ObjectChange[],
): KeyChange[] {
  return changes
    .filter((change) => change.dataset === name && bucket === change.bucket)
    .map((change) => ({
      key: change.key,
      event: change.event,
      etag: bareEtag(change.etag),
      sequencer: change.sequencer,
    }));
}
