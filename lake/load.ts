import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DatasetSource, FileFormat } from '../platform/lake-config/dataset-source.js';
import type { LakeEngine } from './engine.js';
import { literal } from './engine.js';
import { messageOf } from './errors.js';
import { SourceError, readerFor } from './sources/index.js';
import type { SourceContext, SourceObject } from './sources/index.js';

/**
 * One dataset load: download every object into a directory of its own under staging/, read the
 * files into a staging table, swap it in, delete the files. What fails becomes a LoadError whose
 * message names the object (never a credential, never the local path).
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

const hasHive = (source: DatasetSource): boolean => source.connector !== 'https' && source.hivePartitioning;

/**
 * The local name of an object: a number (a key's own characters could be glob patterns to
 * DuckDB) with the format's extension and any compression suffix, which read_csv and read_json
 * detect; with hive partitioning, below the key's `key=value` folders.
 */
export function localPath(dir: string, object: SourceObject, index: number, source: DatasetSource): string {
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

async function stage(
  dir: string,
  source: DatasetSource,
  context: SourceContext,
  signal: AbortSignal,
): Promise<StagedFile[]> {
  const reader = readerFor(source, context);
  try {
    const objects = await reader.list(signal);
    const staged: StagedFile[] = [];
    await eachLimited(objects, DOWNLOAD_CONCURRENCY, async (object, index) => {
      const local = localPath(dir, object, index, source);
      await mkdir(dirname(local), { recursive: true, mode: 0o700 });
      signal.throwIfAborted();
      await object.download(local, signal);
      staged[index] = { local, display: object.display };
    });
    return staged;
  } finally {
    reader.close();
  }
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

/**
 * Loads a dataset's source into the table `name` and answers its new row count. Throws a
 * LoadError, or the signal's reason when the load was abandoned.
 */
export async function loadDataset(
  engine: LakeEngine,
  name: string,
  source: DatasetSource,
  context: SourceContext,
  signal: AbortSignal,
): Promise<number> {
  const dir = join(engine.stagingDir, `${name}-${randomUUID()}`);
  await mkdir(dir, { mode: 0o700 });
  try {
    let files: StagedFile[];
    try {
      files = await stage(dir, source, context, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new LoadError(err instanceof SourceError ? err.message : `download failed: ${messageOf(err)}`, {
        cause: err,
      });
    }
    try {
      return await engine.replaceTable(
        name,
        readSql(
          files.map((file) => file.local),
          source,
        ),
        signal,
      );
    } catch (err) {
      if (signal.aborted) throw err;
      throw new LoadError(
        `cannot read the data as ${source.format}: ${inObjectTerms(messageOf(err), files, dir)}`,
        {
          cause: err,
        },
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
