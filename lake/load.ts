import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DatasetSource, FileFormat } from '../platform/lake-config/dataset-source.js';
import type { LakeEngine } from './engine.js';
import { identifier, literal } from './engine.js';
import { messageOf } from './errors.js';
import { SourceError } from './sources/index.js';
import type { ObjectVersion, SourceObject } from './sources/index.js';
import { FILE_COLUMN, OBJECT_COLUMN, stagingTable } from './tables.js';

/**
 * Moving objects into DuckDB: download the given objects into a directory of their own under
 * staging/, read the files into the dataset's staging table with each row's object id, delete the
 * files. Swapping the staging table in (a full load) or merging it (an incremental refresh) is
 * the caller's transaction (lake/refresh.ts). What fails becomes a LoadError whose message names
 * the object (never a credential, never the local path).
 */

/** A dataset could not be loaded; the message is for its status. */
export class LoadError extends Error {
  override name = 'LoadError';
}

/** Objects fetched at once: enough to hide S3's latency, few enough to be kind to its limits. */
const DOWNLOAD_CONCURRENCY = 4;

interface StagedFile {
  local: string;
  display: string;
}

/** An object downloaded and read: its version as the download saw it, and its rows' id. */
export interface StagedObject extends ObjectVersion {
  key: string;
  id: number;
  rows: number;
}

/** The objects of one batch, now rows of the dataset's staging table. */
export interface StagedBatch {
  objects: StagedObject[];
  /** Bytes downloaded. */
  bytes: number;
}

const hasHive = (source: DatasetSource): boolean => source.connector !== 'https' && source.hivePartitioning;

/**
 * The local name of an object: its id (a key's own characters could be glob patterns to
 * DuckDB; the id also tells each row's object, from the file name) with the format's extension and any compression suffix, which read_csv and read_json
 * detect; with hive partitioning, below the key's `key=value` folders.
 */
export function localPath(
  dir: string,
  object: Pick<SourceObject, 'relative'>,
  index: number,
  source: DatasetSource,
): string {
  const compression = /\.(gz|zst)$/i.exec(object.relative)?.[0].toLowerCase() ?? '';
  const file = `${index}.${source.format}${compression}`;
  if (!hasHive(source)) return join(dir, file);
  const folders = object.relative
    .split('/')
    .slice(0, -1)
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
    .map((segment) => segment.replace(/[^A-Za-z0-9=._%+ -]/g, '_'));
  return join(dir, ...folders, file);
}

const READERS: Record<FileFormat, (files: string, options: string) => string> = {
  parquet: (files, options) => `read_parquet(${files}, union_by_name = true${options})`,
  csv: (files, options) => `read_csv(${files}, auto_detect = true, union_by_name = true${options})`,
  json: (files, options) => `read_json(${files}, format = 'auto', union_by_name = true${options})`,
};

/** The SELECT that reads the staged files; union_by_name lets files of one prefix differ in columns. */
export function readSql(files: readonly string[], source: DatasetSource): string {
  const list = `[${files.map(literal).join(', ')}]`;
  const options = `, hive_partitioning = ${hasHive(source)}`;
  return `SELECT * FROM ${READERS[source.format](list, options)}`;
}

/** readSql with each row's object id, the number its file is named by (localPath). */
export function objectRowsSql(files: readonly string[], source: DatasetSource): string {
  const list = `[${files.map(literal).join(', ')}]`;
  const options = `, hive_partitioning = ${hasHive(source)}, filename = ${literal(FILE_COLUMN)}`;
  const file = identifier(FILE_COLUMN);
  const id = `CAST(regexp_extract(${file}, '/(\\d+)\\.[^/]*$', 1) AS BIGINT) AS ${identifier(OBJECT_COLUMN)}`;
  return `SELECT * EXCLUDE (${file}), ${id} FROM ${READERS[source.format](list, options)}`;
}

/** Runs `work` over `items` with at most `limit` at a time; the first failure wins. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      const item = items[index];
      if (item !== undefined) await work(item, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Downloads each object to its file (named by its id); answers the versions the downloads saw. */
async function download(
  dir: string,
  objects: readonly SourceObject[],
  firstId: number,
  source: DatasetSource,
  signal: AbortSignal,
): Promise<(StagedFile & { object: SourceObject; id: number; version: ObjectVersion })[]> {
  const staged: (StagedFile & { object: SourceObject; id: number; version: ObjectVersion })[] = [];
  await eachLimited(objects, DOWNLOAD_CONCURRENCY, async (object, index) => {
    const id = firstId + index;
    const local = localPath(dir, object, id, source);
    await mkdir(dirname(local), { recursive: true, mode: 0o700 });
    signal.throwIfAborted();
    const got = await object.download(local, signal);
    const version = {
      etag: got.etag ?? object.etag,
      lastModified: got.lastModified ?? object.lastModified,
      size: got.size ?? object.size,
    };
    staged[index] = { local, display: object.display, object, id, version };
  });
  return staged;
}

/**
 * DuckDB's messages name the local files: name the objects instead. The `LINE 1: ...` excerpt
 * quotes the lake's own SQL (cut mid-path), which tells the user nothing: drop it.
 */
function inObjectTerms(message: string, files: readonly StagedFile[], dir: string): string {
  let out = (message.split(/\n\s*LINE \d+:/)[0] ?? message).trim().replace(/^Error: /, '');
  for (const file of files) out = out.replaceAll(file.local, file.display);
  return out.replaceAll(dir, '<staging>');
}

/** Reads the downloaded files into the dataset's staging table; answers the rows of each object id. */
async function readStaged(
  engine: LakeEngine,
  name: string,
  source: DatasetSource,
  files: readonly StagedFile[],
  dir: string,
  signal: AbortSignal,
): Promise<Map<number, number>> {
  const table = stagingTable(name);
  let counted: unknown[];
  try {
    await engine.run(
      [
        `DROP TABLE IF EXISTS ${table}`,
        `CREATE TABLE ${table} AS ${objectRowsSql(
          files.map((file) => file.local),
          source,
        )}`,
      ],
      signal,
    );
    counted = await engine.rows(
      `SELECT ${identifier(OBJECT_COLUMN)} AS id, count(*) AS n FROM ${table} GROUP BY 1`,
    );
  } catch (err) {
    if (signal.aborted) throw err;
    throw new LoadError(
      `cannot read the data as ${source.format}: ${inObjectTerms(messageOf(err), files, dir)}`,
      { cause: err },
    );
  }
  const rowsById = new Map<number, number>();
  for (const row of counted)
    if (typeof row === 'object' && row !== null && 'id' in row && 'n' in row)
      rowsById.set(Number(row.id), Number(row.n));
  return rowsById;
}

/**
 * Downloads `objects` (ids from `firstId` on) and reads them into the dataset's staging table,
 * replacing any there. Throws a LoadError, or the signal's reason when the work was abandoned.
 */
export async function stageObjects(
  engine: LakeEngine,
  name: string,
  source: DatasetSource,
  objects: readonly SourceObject[],
  firstId: number,
  signal: AbortSignal,
): Promise<StagedBatch> {
  const dir = join(engine.stagingDir, `${name}-${randomUUID()}`);
  await mkdir(dir, { mode: 0o700 });
  try {
    let files;
    try {
      files = await download(dir, objects, firstId, source, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new LoadError(err instanceof SourceError ? err.message : `download failed: ${messageOf(err)}`, {
        cause: err,
      });
    }
    const rowsById = await readStaged(engine, name, source, files, dir, signal);
    return {
      objects: files.map((file) => ({
        key: file.object.key,
        id: file.id,
        rows: rowsById.get(file.id) ?? 0,
        ...file.version,
      })),
      bytes: files.reduce((total, file) => total + (file.version.size ?? 0), 0),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
