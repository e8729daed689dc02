import { constants } from 'node:fs';
import { copyFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileSource } from '../../platform/lake-config/dataset-source.js';
import {
  FILE_ROOTS_RULE,
  isBelowRoots,
  realPathOf,
  realRoots,
} from '../../platform/lake-config/file-roots.js';
import { SourceError, isDataFile } from './types.js';
import type { DatasetReader, ObjectVersion, SourceObject } from './types.js';

/**
 * Local files (the embedded default only), below the lake's file roots. Every file is checked
 * after following symbolic links and copied from its real path into the lake's staging directory
 * like any download: once DuckDB is locked down it can read nothing else. Messages name files as
 * the dataset's `from` does, never by where links lead. A file's version is its modification time
 * and size (files have no ETag).
 */
export function fileReader(source: FileSource, fileRoots: readonly string[]): DatasetReader {
  const display = `file://${source.path}`;
  return {
    list: async () =>
      source.isDirectory
        ? listDirectory(source, fileRoots, display)
        : [await singleFile(source, fileRoots, display)],
    head: (key) => headFile(source, fileRoots, display, key),
    close: () => undefined,
  };
}

/** A file to copy from its real path; `display` names it in messages. */
function fileObject(real: string, display: string, relative: string, version: ObjectVersion): SourceObject {
  return {
    ...version,
    key: relative,
    display,
    relative,
    async download(target, signal) {
      signal.throwIfAborted();
      try {
        const before = await stat(real);
        // A copy-on-write clone where the file system offers one, a plain copy elsewhere.
        await copyFile(real, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
        return versionOf(before);
      } catch (err) {
        throw new SourceError(`${display}: ${describeFileError(err)}`, { cause: err });
      }
    },
  };
}

/** A `from` naming one file: that file, keyed by its name. */
async function singleFile(
  source: FileSource,
  fileRoots: readonly string[],
  display: string,
): Promise<SourceObject> {
  const roots = await realRoots(fileRoots);
  if (!(await isBelowRoots(source.path, roots))) throw new SourceError(`${display}: ${FILE_ROOTS_RULE}`);
  const real = await realPathOf(source.path);
  const info = await stat(real).catch(() => undefined);
  return fileObject(real, display, source.path.slice(source.path.lastIndexOf('/') + 1), versionOf(info));
}

/** A `from` naming a directory: its non-empty data files at any depth, keyed by their paths in it. */
async function listDirectory(
  source: FileSource,
  fileRoots: readonly string[],
  display: string,
): Promise<SourceObject[]> {
  const roots = await realRoots(fileRoots);
  if (!(await isBelowRoots(source.path, roots))) throw new SourceError(`${display}: ${FILE_ROOTS_RULE}`);
  let entries: string[];
  try {
    entries = await readdir(source.path, { recursive: true });
  } catch (err) {
    throw new SourceError(`${display}: ${describeFileError(err)}`, { cause: err });
  }
  const objects: SourceObject[] = [];
  for (const relative of entries.sort()) {
    if (!isDataFile(relative)) continue;
    const path = join(source.path, relative);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() !== true || info.size === 0) continue;
    // A link inside the directory may lead out of it: checked like the directory itself.
    if (!(await isBelowRoots(path, roots)))
      throw new SourceError(`${display}${relative}: ${FILE_ROOTS_RULE}`);
    objects.push(fileObject(await realPathOf(path), `${display}${relative}`, relative, versionOf(info)));
  }
  if (objects.length === 0) throw new SourceError(`${display}: no files in this directory`);
  return objects;
}

/** The file `key` names, if the dataset has it: a data file in its directory, or its one file. */
async function headFile(
  source: FileSource,
  fileRoots: readonly string[],
  display: string,
  key: string,
): Promise<SourceObject | undefined> {
  const roots = await realRoots(fileRoots);
  const relative = key.startsWith(source.path) ? key.slice(source.path.length) : key.replace(/^\/+/, '');
  const base = source.path.slice(source.path.lastIndexOf('/') + 1);
  if (source.isDirectory ? relative.split('/').includes('..') || !isDataFile(relative) : relative !== base)
    return undefined;
  const path = source.isDirectory ? join(source.path, relative) : source.path;
  const info = await stat(path).catch(() => undefined);
  if (info?.isFile() !== true || info.size === 0) return undefined;
  if (!(await isBelowRoots(path, roots))) throw new SourceError(`${display}${relative}: ${FILE_ROOTS_RULE}`);
  return fileObject(
    await realPathOf(path),
    source.isDirectory ? `${display}${relative}` : display,
    relative,
    versionOf(info),
  );
}

function versionOf(info: { mtime: Date; size: number } | undefined): ObjectVersion {
  return info === undefined ? {} : { lastModified: info.mtime.toISOString(), size: info.size };
}

/** A system error in words, without the path Node's messages carry. */
function describeFileError(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory (end from with / to load a directory)';
  if (code === 'ENOTDIR') return 'not a directory';
  if (code === 'ELOOP') return 'too many levels of symbolic links';
  return typeof code === 'string' ? `cannot be read (${code})` : 'cannot be read';
}
