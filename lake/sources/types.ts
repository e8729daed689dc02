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

/** Which version of an object a source holds, as far as the source tells (https servers may tell nothing). */
export interface ObjectVersion {
  /** Without quotes. */
  etag?: string | undefined;
  /** ISO time. */
  lastModified?: string | undefined;
  size?: number | undefined;
}

export interface SourceObject extends ObjectVersion {
  /** The object's name in the lake's catalog: the S3 key, the https URL, the path below a file dataset. */
  key: string;
  /** How messages name it: `s3://bucket/key`, the https URL, `file:///path`. */
  display: string;
  /** The key below the dataset's prefix or directory, `/`-separated (`year=2024/part-0.parquet`). */
  relative: string;
  /** Writes the object's bytes to `target` (a new file); answers the version it wrote, as far as known. */
  download(target: string, signal: AbortSignal): Promise<ObjectVersion>;
}

export interface DatasetReader {
  /** Every object of the dataset with its version; an empty prefix or directory is an error. */
  list(signal: AbortSignal): Promise<SourceObject[]>;
  /**
   * The one object `key` (as SourceObject.key names it) with its current version, or undefined
   * when the source does not hold it as a data object of this dataset.
   */
  head(key: string, signal: AbortSignal): Promise<SourceObject | undefined>;
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

/** S3 and HTTP write ETags in quotes (`"abc"`, weak ones `W/"abc"`): the catalog keeps the bare value. */
export function bareEtag(etag: string | undefined): string | undefined {
  if (etag === undefined || etag === '') return undefined;
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** An HTTP date or a Date as ISO, or undefined. */
export function isoTime(value: string | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = value instanceof Date ? value : new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}
