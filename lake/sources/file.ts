import { constants } from 'node:fs';
import { copyFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileSource } from '../../platform/lake-config/dataset-source.js';
import { SourceError, isDataFile } from './types.js';
import type { DatasetReader, SourceObject } from './types.js';

/**
 * Local files (the embedded default only). They are copied into the lake's staging directory like
 * any download: once DuckDB is locked down it can read nothing else.
 */
export function fileReader(source: FileSource): DatasetReader {
  const object = (path: string, relative: string): SourceObject => ({
    display: `file://${path}`,
    relative,
    async download(target, signal) {
      signal.throwIfAborted();
      try {
        // A copy-on-write clone where the file system offers one, a plain copy elsewhere.
        await copyFile(path, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      } catch (err) {
        throw new SourceError(`file://${path}: ${describeFileError(err)}`, { cause: err });
      }
    },
  });
  return {
    async list() {
      if (!source.isDirectory)
        return [object(source.path, source.path.slice(source.path.lastIndexOf('/') + 1))];
      let entries: string[];
      try {
        entries = await readdir(source.path, { recursive: true });
      } catch (err) {
        throw new SourceError(`file://${source.path}: ${describeFileError(err)}`, { cause: err });
      }
      const objects: SourceObject[] = [];
      for (const relative of entries.sort()) {
        const path = join(source.path, relative);
        if (!isDataFile(relative)) continue;
        const info = await stat(path).catch(() => undefined);
        if (info?.isFile() === true && info.size > 0) objects.push(object(path, relative));
      }
      if (objects.length === 0) throw new SourceError(`file://${source.path}: no files in this directory`);
      return objects;
    },
    close: () => undefined,
  };
}

function describeFileError(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory (end from with / to load a directory)';
  return err instanceof Error ? err.message : String(err);
}
