import type { DatasetSource } from '../platform/lake-config/dataset-source.js';
import type { LakeRefreshOutcome } from '../platform/lake-protocol.js';
import { lastObjectId } from './catalog.js';
import type { Catalog, StoredDataset, StoredObject } from './catalog.js';
import type { LakeEngine } from './engine.js';
import { identifier } from './engine.js';
import { stageObjects } from './load.js';
import type { StagedBatch } from './load.js';
import { readerFor } from './sources/index.js';
import type { DatasetReader, SourceContext } from './sources/index.js';
import { diffListing, mergeObjects, planChanges, sameVersion } from './refresh-plan.js';
import type { KeyChange, RefreshPlan } from './refresh-plan.js';
import { OBJECT_COLUMN, columnsFit, dataTable, datasetViewStatements, stagingTable } from './tables.js';

/**
 * One refresh of one dataset's table (docs/adr/0010-durable-incremental-lake.md): a full load
 * (every object again, the new table swapped in), a check (the source's listing against the
 * catalog: only changed and new objects are fetched, removed ones deleted), or changes to named
 * keys (S3 events, waitFor). Each ends in one transaction over the rows and the catalog; a fetched
 * object whose columns do not fit the table turns it into a full load (`schema`).
 */

export type RefreshTrigger = LakeRefreshOutcome['trigger'];

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

/** A fetched object's columns do not fit the table. */
class SchemaChanged extends Error {
  override name = 'SchemaChanged';
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
    const plan = work.check
      ? diffListing(stored, await reader.list(signal))
      : await planChanges(stored, work.changes, (key) => reader.head(key, signal));
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

  async incremental(
    stored: StoredDataset,
    plan: RefreshPlan,
    trigger: RefreshTrigger,
  ): Promise<StoredDataset> {
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

function deleteRows(name: string, ids: readonly number[]): string[] {
  const statements: string[] = [];
  for (let at = 0; at < ids.length; at += 1000)
    statements.push(
      `DELETE FROM ${dataTable(name)} WHERE ${identifier(OBJECT_COLUMN)} IN (${ids.slice(at, at + 1000).join(', ')})`,
    );
  return statements;
}
