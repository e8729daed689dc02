/**
 * Where a dataset's bytes come from: each source lists its objects, and each object downloads
 * itself to a local file. The lake then reads the local files with DuckDB (never DuckDB's own
 * httpfs, which downloads an extension at run time).
 */

import type { TargetPolicy } from '../../platform/outbound-targets.js';

/** What the lake's installation allows its sources (AGENTRY_LAKE_FILE_ROOTS, AGENTRY_LAKE_PRIVATE_TARGETS). */
export interface SourceContext {
  /** The directories file:// datasets may read below (their real paths are compared). */
  fileRoots: readonly string[];
  /** Whether downloads may reach loopback and private addresses. */
  outbound: TargetPolicy;
}

export interface SourceObject {
  /** How messages name it: `s3://bucket/key`, the https URL, `file:///path`. */
  display: string;
  /** The key below the dataset's prefix or directory, `/`-separated (`year=2024/part-0.parquet`). */
  relative: string;
  /** Writes the object's bytes to `target` (a new file). */
  download(target: string, signal: AbortSignal): Promise<void>;
}

export interface DatasetReader {
  /** Every object of the dataset; an empty prefix or directory is an error. */
  list(signal: AbortSignal): Promise<SourceObject[]>;
  /** Releases connections. */
  close(): void;
}

/** A failure that names the object and says what went wrong, for the dataset's status. */
export class SourceError extends Error {
  override name = 'SourceError';
}

/**
 * Spark's `_SUCCESS`, `_committed_*`, editors' `.tmp` files and the like are not data: skip a key
 * whose file name starts with `_` or `.` (the convention of Hive, Spark and DuckDB's own writers).
 */
export function isDataFile(relative: string): boolean {
  const name = relative.slice(relative.lastIndexOf('/') + 1);
  return name !== '' && !name.startsWith('_') && !name.startsWith('.');
}
