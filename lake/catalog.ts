import { createHash } from 'node:crypto';
import { z } from 'zod';
import { LakeRefreshOutcomeSchema } from '../platform/lake-protocol.js';
import type { LakeDatasetState, LakeRefreshOutcome } from '../platform/lake-protocol.js';
import { literal } from './engine.js';
import type { LakeEngine } from './engine.js';
import type { ObjectVersion } from './sources/index.js';

/**
 * What the database file holds, per dataset: a digest of its definition, when it was loaded and
 * known current, its last refresh, and per source object the version loaded and its rows
 * (docs/adr/0010-durable-incremental-lake.md). Kept in two tables beside the data, written in the
 * same transaction as the rows they describe, and mirrored in memory (status, planning) after
 * each commit. The tables are readable by SQL: they hold keys and versions, never a definition's
 * credentials (a digest only).
 */

const SCHEMA = 'agentry_catalog';
const DATASETS = `${SCHEMA}.datasets`;
const OBJECTS = `${SCHEMA}.objects`;

export interface StoredObject extends ObjectVersion {
  /** As SourceObject.key names it. */
  key: string;
  /** The value of the rows' object column. */
  id: number;
  rows: number;
  /** The S3 event sequencer of the last change applied to this key, if one came by event. */
  sequencer?: string | undefined;
}

export interface StoredDataset {
  name: string;
  /** sha256 of definitionOf(dataset): equal digests, same source and params. */
  definition: string;
  loadedAt: string;
  dataAsOf: string;
  lastRefresh?: LakeRefreshOutcome | undefined;
  objects: ReadonlyMap<string, StoredObject>;
}

/** How a commit changes a dataset's object rows: all of them, or some keys. */
export type ObjectWrites =
  { all: true } | { all: false; removed: readonly string[]; upserted: readonly StoredObject[] };

export const definitionDigest = (definition: string): string =>
  createHash('sha256').update(definition).digest('hex');

const optionalText = z
  .string()
  .nullable()
  .transform((value) => value ?? undefined);
const DatasetRowSchema = z.object({
  name: z.string(),
  definition: z.string(),
  loaded_at: z.string(),
  data_as_of: z.string(),
  last_refresh: optionalText,
});
const ObjectRowSchema = z.object({
  dataset: z.string(),
  key: z.string(),
  id: z.coerce.number().int(),
  etag: optionalText,
  last_modified: optionalText,
  size: z.coerce
    .number()
    .int()
    .nullable()
    .transform((value) => value ?? undefined),
  rows: z.coerce.number().int(),
  sequencer: optionalText,
});

const text = (value: string | undefined): string => (value === undefined ? 'NULL' : literal(value));
const integer = (value: number | undefined): string =>
  value === undefined ? 'NULL' : String(Math.trunc(value));

function parseRefresh(json: string | undefined): LakeRefreshOutcome | undefined {
  if (json === undefined) return undefined;
  try {
    const parsed = LakeRefreshOutcomeSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export class Catalog {
  private constructor(
    private readonly engine: LakeEngine,
    private readonly stored: Map<string, StoredDataset>,
  ) {}

  /** Creates the tables when missing and reads what they hold. */
  static async open(engine: LakeEngine): Promise<Catalog> {
    await engine.run([
      `CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
      `CREATE TABLE IF NOT EXISTS ${DATASETS} (name VARCHAR, definition VARCHAR, loaded_at VARCHAR, data_as_of VARCHAR, last_refresh VARCHAR)`,
      `CREATE TABLE IF NOT EXISTS ${OBJECTS} (dataset VARCHAR, key VARCHAR, id BIGINT, etag VARCHAR, last_modified VARCHAR, size BIGINT, rows BIGINT, sequencer VARCHAR)`,
    ]);
    const objects = new Map<string, Map<string, StoredObject>>();
    for (const row of await engine.rows(`SELECT * FROM ${OBJECTS}`)) {
      const { dataset, last_modified: lastModified, ...object } = ObjectRowSchema.parse(row);
      const map = objects.get(dataset) ?? new Map<string, StoredObject>();
      map.set(object.key, { ...object, lastModified });
      objects.set(dataset, map);
    }
    const stored = new Map<string, StoredDataset>();
    for (const row of await engine.rows(`SELECT * FROM ${DATASETS}`)) {
      const parsed = DatasetRowSchema.parse(row);
      stored.set(parsed.name, {
        name: parsed.name,
        definition: parsed.definition,
        loadedAt: parsed.loaded_at,
        dataAsOf: parsed.data_as_of,
        lastRefresh: parseRefresh(parsed.last_refresh),
        objects: objects.get(parsed.name) ?? new Map(),
      });
    }
    return new Catalog(engine, stored);
  }

  get(name: string): StoredDataset | undefined {
    return this.stored.get(name);
  }

  names(): string[] {
    return [...this.stored.keys()];
  }

  /** The statements that record `next`; run them in the transaction that changes its rows, then commit(). */
  writeStatements(next: StoredDataset, objects: ObjectWrites): string[] {
    const statements = [
      `DELETE FROM ${DATASETS} WHERE name = ${literal(next.name)}`,
      `INSERT INTO ${DATASETS} VALUES (${[
        literal(next.name),
        literal(next.definition),
        literal(next.loadedAt),
        literal(next.dataAsOf),
        text(next.lastRefresh === undefined ? undefined : JSON.stringify(next.lastRefresh)),
      ].join(', ')})`,
    ];
    const dataset = literal(next.name);
    const upserted = objects.all ? [...next.objects.values()] : objects.upserted;
    if (objects.all) statements.push(`DELETE FROM ${OBJECTS} WHERE dataset = ${dataset}`);
    else {
      const keys = [...objects.removed, ...objects.upserted.map((object) => object.key)];
      for (let at = 0; at < keys.length; at += 1000)
        statements.push(
          `DELETE FROM ${OBJECTS} WHERE dataset = ${dataset} AND key IN (${keys
            .slice(at, at + 1000)
            .map(literal)
            .join(', ')})`,
        );
    }
    for (let at = 0; at < upserted.length; at += 1000) {
      const values = upserted
        .slice(at, at + 1000)
        .map(
          (object) =>
            `(${[
              dataset,
              literal(object.key),
              integer(object.id),
              text(object.etag),
              text(object.lastModified),
              integer(object.size),
              integer(object.rows),
              text(object.sequencer),
            ].join(', ')})`,
        );
      statements.push(`INSERT INTO ${OBJECTS} VALUES ${values.join(', ')}`);
    }
    return statements;
  }

  dropStatements(name: string): string[] {
    return [
      `DELETE FROM ${DATASETS} WHERE name = ${literal(name)}`,
      `DELETE FROM ${OBJECTS} WHERE dataset = ${literal(name)}`,
    ];
  }

  /** After the transaction with writeStatements(next) committed. */
  commit(next: StoredDataset): void {
    this.stored.set(next.name, next);
  }

  /** After the transaction with dropStatements(name) committed. */
  forget(name: string): void {
    this.stored.delete(name);
  }

  /** Runs a dataset-only update (dataAsOf, lastRefresh, sequencers) as its own transaction. */
  async record(next: StoredDataset, objects: ObjectWrites): Promise<void> {
    await this.engine.transaction(this.writeStatements(next, objects));
    this.commit(next);
  }
}

/** The largest object id in use (a new object's rows take the next ones). */
export function lastObjectId(stored: StoredDataset | undefined): number {
  let last = 0;
  for (const object of stored?.objects.values() ?? []) last = Math.max(last, object.id);
  return last;
}

/** The identity line of an object version: its ETag, else LastModified and size. */
function versionLine(object: StoredObject): string {
  return `${object.key} ${object.etag ?? `${object.lastModified ?? ''}/${object.size ?? ''}`}`;
}

/** The status fields a stored dataset gives (platform/lake-protocol.ts LakeDatasetState). */
export function storedState(stored: StoredDataset): Omit<LakeDatasetState, 'status' | 'error'> {
  const objects = [...stored.objects.values()];
  let rowCount = 0;
  let bytes = 0;
  let newest: string | undefined;
  for (const object of objects) {
    rowCount += object.rows;
    bytes += object.size ?? 0;
    if (object.lastModified !== undefined && (newest === undefined || object.lastModified > newest))
      newest = object.lastModified;
  }
  const digest = createHash('sha256').update(objects.map(versionLine).sort().join('\n')).digest('hex');
  return {
    rowCount,
    loadedAt: stored.loadedAt,
    bytes,
    dataAsOf: stored.dataAsOf,
    sources: { objects: objects.length, digest, ...(newest === undefined ? {} : { newestModified: newest }) },
    ...(stored.lastRefresh === undefined ? {} : { lastRefresh: stored.lastRefresh }),
  };
}
