import { errnoOf } from '../../errno.js';
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** Secrets live in these files: only the owner may read them. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * A write that failed after its rename: the new content may already be visible on disk, so the
 * in-memory view can no longer be trusted to match it.
 */
export class UncertainWriteError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'UncertainWriteError';
  }
}

/** The errno code of a Node.js system error (no instanceof: errors may come from another realm). */
/** Temporary files of an interrupted write: `.<target>.<random>.tmp`; never a valid object name. */
export const isTempFileName = (name: string): boolean => name.startsWith('.') && name.endsWith('.tmp');

const tempPathFor = (path: string): string =>
  join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);

/** Makes a directory entry change (create, rename, unlink) durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates `dir` and its missing parents (mode 0700), making each new entry durable. */
export async function ensureDirectory(dir: string): Promise<void> {
  const target = resolve(dir);
  const firstCreated = await mkdir(target, { recursive: true, mode: DIR_MODE });
  if (firstCreated === undefined) return;
  const created = resolve(firstCreated);
  for (let current = target; ; current = dirname(current)) {
    await fsyncDirectory(dirname(current));
    if (current === created || dirname(current) === current) return;
  }
}

async function writeAndSync(path: string, data: string): Promise<void> {
  const handle = await open(path, 'wx', FILE_MODE);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `data` so that a crash at any moment leaves either the old or the new file:
 * temp file in the same directory, fsync, rename over the target, fsync the directory.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = tempPathFor(path);
  try {
    await writeAndSync(temp, data);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  try {
    await fsyncDirectory(dirname(path));
  } catch (err) {
    throw new UncertainWriteError(`syncing directory of ${path}`, { cause: err });
  }
}

/** Removes `path` durably; a file that is already gone counts as removed. */
export async function removeFileDurably(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
  try {
    await fsyncDirectory(dirname(path));
  } catch (err) {
    throw new UncertainWriteError(`syncing directory of ${path}`, { cause: err });
  }
}
