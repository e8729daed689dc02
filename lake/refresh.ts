import type { DatasetSource } from '../platform/lake-config/dataset-source.js';
import type { LakeRefreshOutcome } from '../platform/lake-protocol.js';
import { lastObjectId } from './catalog.js';
import type { Catalog, StoredDataset, StoredObject } from './catalog.js';
import type { LakeEngine } from './engine.js';
import { identifier } from './engine.js';
import { stageObjects } from './load.js';
import type { StagedBatch } from './load.js';
import { readerFor } from './sources/index.js';
import type { DatasetReader, ObjectVersion, SourceContext, SourceObject } from './sources/index.js';
import { OBJECT_COLUMN, columnsFit, dataTable, datasetViewStatements, stagingTable } from './tables.js';

/**
 * One refresh of one dataset's table (docs/adr/0010-durable-incremental-lake.md): a full load
 * (every object again, the new table swapped in), a check (the source's listing against the
 * catalog: only changed and new objects are fetched, removed ones deleted), or changes to named
 * keys (S3 events, waitFor). Each ends in one transaction over the rows and the catalog; a fetched
 * object whose columns do not fit the table turns it into a full load (`schema`).
 */

export type RefreshTrigger = LakeRefreshOutcome['trigger'];

/** A key to bring up to date alone: `created` looks at the source (the object may be gone again). */
export interface KeyChange {
  key: string;
  event: 'created' | 'removed';
  etag?: string | undefined;
  sequencer?: string | undefined;
}

/** What a refresh is asked to do; the strongest wins (full, then check, then changes). */
export interface RefreshWork {
  full: boolean;
  check: boolean;
  changes: KeyChange[];
  trigger: RefreshTrigger;
}

export interface RefreshContext {
  engine: LakeEngine;
  catalog: Catalog;
  sources: SourceContext;
  now: () => Date;
}

interface Plan {
  fetch: SourceObject[];
  removed: string[];
  /** Keys whose data stays but whose last event moved on. */
  sequencers: Map<string, string>;
}

/** A fetched object's columns do not fit the table. */
class SchemaChanged extends Error {
  override name = 'SchemaChanged';
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

/**
 * Brings the dataset's table up to its source as `work` asks; answers what is now stored. Throws
 * a LoadError (the table and catalog unchanged), or the signal's reason when abandoned.
 */
export async function refreshDataset(
  context: RefreshContext,
  name: string,
  definition: string,
  source: DatasetSource,
  work: RefreshWork,
  signal: AbortSignal,
): Promise<StoredDataset> {
  const stored = context.catalog.get(name);
  const reader = readerFor(source, context.sources);
  const run = new Refresh(context, name, definition, source, reader, signal);
  try {
    if (stored === undefined || stored.definition !== definition) return await run.full('load', undefined);
    if (work.full) return await run.full(work.trigger, stored);
    const plan = work.check ? await run.diffListing(stored) : await run.planChanges(stored, work.changes);
    try {
      return await run.incremental(stored, plan, work.trigger);
    } catch (err) {
      if (!(err instanceof SchemaChanged) || signal.aborted) throw err;
      return await run.full('schema', stored);
    }
  } finally {
    reader.close();
    await context.engine.run(`DROP TABLE IF EXISTS ${stagingTable(name)}`).catch(() => undefined);
  }
}

class Refresh {
  private readonly started: number;
  private readonly startedAt: string;

  constructor(
    private readonly context: RefreshContext,
    private readonly name: string,
    private readonly definition: string,
    private readonly source: DatasetSource,
    private readonly reader: DatasetReader,
    private readonly signal: AbortSignal,
  ) {
    this.started = performance.now();
    // The data is current with the source as of the listing (or HEAD) this refresh starts with.
    this.startedAt = context.now().toISOString();
  }

  private outcome(
    kind: LakeRefreshOutcome['kind'],
    trigger: RefreshTrigger,
    batch: StagedBatch | undefined,
    removedObjects: number,
  ): LakeRefreshOutcome {
    return {
      kind,
      trigger,
      at: this.startedAt,
      fetchedObjects: batch?.objects.length ?? 0,
      fetchedBytes: batch?.bytes ?? 0,
      removedObjects,
      ms: Math.round(performance.now() - this.started),
    };
  }

  async full(trigger: RefreshTrigger, previous: StoredDataset | undefined): Promise<StoredDataset> {
    const listed = await this.reader.list(this.signal);
    const batch = await stageObjects(this.context.engine, this.name, this.source, listed, 1, this.signal);
    const objects = new Map<string, StoredObject>();
    for (const object of batch.objects) {
      const before = previous?.objects.get(object.key);
      const sequencer = before !== undefined && sameVersion(before, object) ? before.sequencer : undefined;
      objects.set(object.key, { ...object, sequencer });
    }
    const removed = [...(previous?.objects.keys() ?? [])].filter((key) => !objects.has(key)).length;
    const next: StoredDataset = {
      name: this.name,
      definition: this.definition,
      loadedAt: this.context.now().toISOString(),
      dataAsOf: this.startedAt,
      lastRefresh: this.outcome('full', trigger, batch, removed),
      objects,
    };
    const { engine, catalog } = this.context;
    await engine.transaction(
      [
        `DROP TABLE IF EXISTS ${dataTable(this.name)}`,
        `ALTER TABLE ${stagingTable(this.name)} RENAME TO ${identifier(this.name)}`,
        ...datasetViewStatements(this.name),
        ...catalog.writeStatements(next, { all: true }),
      ],
      this.signal,
    );
    catalog.commit(next);
    return next;
  }

  /** The listing against the catalog: new and changed objects to fetch, missing ones to delete. */
  async diffListing(stored: StoredDataset): Promise<Plan> {
    const listed = await this.reader.list(this.signal);
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

  /** Each key as the source holds it now; a redelivered or older event changes nothing. */
  async planChanges(stored: StoredDataset, changes: readonly KeyChange[]): Promise<Plan> {
    const plan: Plan = { fetch: [], removed: [], sequencers: new Map() };
    for (const change of latestPerKey(changes))
      await this.planChange(stored.objects.get(change.key), change, plan);
    return plan;
  }

  private async planChange(before: StoredObject | undefined, change: KeyChange, plan: Plan): Promise<void> {
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
    const current = await this.reader.head(key, this.signal);
    if (current === undefined) {
      if (before !== undefined) plan.removed.push(key);
    } else if (before !== undefined && sameVersion(before, current)) keep();
    else {
      plan.fetch.push(current);
      if (sequencer !== undefined) plan.sequencers.set(key, sequencer);
    }
  }

  async incremental(stored: StoredDataset, plan: Plan, trigger: RefreshTrigger): Promise<StoredDataset> {
    const { engine, catalog } = this.context;
    const batch =
      plan.fetch.length === 0
        ? undefined
        : await stageObjects(
            engine,
            this.name,
            this.source,
            plan.fetch,
            lastObjectId(stored) + 1,
            this.signal,
          );
    if (batch !== undefined && !(await columnsFit(engine, this.name))) throw new SchemaChanged();
    const { objects, upserted, replacedIds } = mergeObjects(stored, plan, batch);
    const changed = plan.fetch.length > 0 || plan.removed.length > 0;
    const next: StoredDataset = {
      ...stored,
      loadedAt: changed ? this.context.now().toISOString() : stored.loadedAt,
      dataAsOf: this.startedAt,
      lastRefresh: this.outcome(changed ? 'incremental' : 'check', trigger, batch, plan.removed.length),
      objects,
    };
    const statements = [
      ...deleteRows(this.name, replacedIds),
      ...(batch === undefined
        ? []
        : [
            `INSERT INTO ${dataTable(this.name)} BY NAME SELECT * FROM ${stagingTable(this.name)}`,
            `DROP TABLE ${stagingTable(this.name)}`,
          ]),
      ...catalog.writeStatements(next, { all: false, removed: plan.removed, upserted }),
    ];
    try {
      await engine.transaction(statements, this.signal);
    } catch (err) {
      // A column whose values do not convert to the table's type: the table must change.
      if (batch !== undefined && !this.signal.aborted) throw new SchemaChanged('', { cause: err });
      throw err;
    }
    catalog.commit(next);
    return next;
  }
}

/** A change older than (or the same as) the last one applied to its key. */
function isStale(change: KeyChange, before: StoredObject | undefined): boolean {
  if (change.sequencer === undefined || before?.sequencer === undefined) return false;
  return compareSequencers(change.sequencer, before.sequencer) <= 0;
}

/** The catalog's objects after a plan: fetched ones with new ids, removed and replaced ones gone. */
function mergeObjects(
  stored: StoredDataset,
  plan: Plan,
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

function deleteRows(name: string, ids: readonly number[]): string[] {
  const statements: string[] = [];
  for (let at = 0; at < ids.length; at += 1000)
    statements.push(
      `DELETE FROM ${dataTable(name)} WHERE ${identifier(OBJECT_COLUMN)} IN (${ids.slice(at, at + 1000).join(', ')})`,
    );
  return statements;
}
